/** A body-read error the client caused (HPE_* parse codes, a reset mid-body): a 400, never a server error. */
const CLIENT_CODE = /^(HPE_.*|ECONNRESET|ECONNABORTED|EPIPE|ERR_STREAM_PREMATURE_CLOSE|ABORT_ERR|UND_ERR_ABORTED)$/s;

export function isClientAbort(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = (e as Error & { cause?: unknown }).cause, depth++) {
    const code = (e as Error & { code?: unknown }).code;
    if (typeof code === 'string' && CLIENT_CODE.test(code)) return true;
    if (e.name === 'AbortError' || e.message === 'aborted' || e.message === 'terminated') return true;
  }
  return false;
}
