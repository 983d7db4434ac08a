/** The reference server's paid route (shared by the server and its driver). */
export const PEER_PATH = '/v1/paid';
