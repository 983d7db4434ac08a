/** serve.ts's import path; the plane and its configuration are plane.ts's. */
export { paymentPlaneFor } from './plane.ts';
