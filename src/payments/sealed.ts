import { createCipheriv, createDecipheriv, createHmac, randomBytes, type KeyObject } from 'node:crypto';

/** AES-256-GCM for a stored answer holding a receipt token; `context` is authenticated, not stored. */
export type Sealer = ReturnType<typeof createSealer>;

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function createSealer(secret: () => KeyObject) {
  let key: Buffer | undefined;
  // Derived once, on first use: a purpose-bound key, never the secret itself.
  const keyOf = () => (key ??= createHmac('sha256', secret()).update('isocast sealed payment result v1').digest());
  return {
    seal(plain: string, context: string): string {
      const iv = randomBytes(IV_BYTES);
      const c = createCipheriv('aes-256-gcm', keyOf(), iv);
      c.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return Buffer.concat([iv, c.getAuthTag(), body]).toString('base64');
    },
    /** The plain text, or null for a value that does not open under this secret and context. */
    open(sealed: string, context: string): string | null {
      try {
        const raw = Buffer.from(sealed, 'base64');
        if (raw.length < IV_BYTES + TAG_BYTES) return null;
        const d = createDecipheriv('aes-256-gcm', keyOf(), raw.subarray(0, IV_BYTES));
        d.setAAD(Buffer.from(context, 'utf8'));
        d.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([d.update(raw.subarray(IV_BYTES + TAG_BYTES)), d.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}
