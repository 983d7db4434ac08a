/**
 * The site icon (16x16, 32-bit ICO, 1,150 bytes): browsers ask every page's origin for
 * /favicon.ico, and a 404 there fills logs and devtools with noise. Kept as base64 in the bundle so
 * the single binary needs no extra asset for it.
 */
export const FAVICON_ICO: Uint8Array = Uint8Array.from(
  Buffer.from(
    'AAABAAEAEBAAAAEAIABoBAAAFgAAACgAAAAQAAAAIAAAAAEAIAAAAAAAQAQAAAAAAAAAAAAAAAAAAAAAAABfOh8AXzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh8AXzof/186H/9fOh//Xzof/186H/9fOh//Xzof/xlK5v8ZSub/Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/xlK5v8ZSub/GUrm/xlK5v9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/xlK5v8ZSub/GUrm/xlK5v8ZSub/GUrm/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/8ZSub/GUrm/xlK5v8ZSub/GUrm/xlK5v9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/xlK5v8ZSub/GUrm/xlK5v9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//GUrm/xlK5v9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/xlK5v8ZSub/Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/8ZSub/GUrm/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//GUrm/xlK5v9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof//X19f/19fX/Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H//19fX/9fX1/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//9fX1//X19f9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof//X19f/19fX/Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh8AXzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh//Xzof/186H/9fOh8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==',
    'base64',
  ),
);
