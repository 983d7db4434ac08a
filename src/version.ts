/** Release version; the API itself is 1.0.0 (spec 9) and versioned separately. */
export const VERSION = '1.0.0';
export const API_VERSION = '1.0.0';
