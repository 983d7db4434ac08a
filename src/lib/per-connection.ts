/**
 * One instance of a store per database connection, for the few stores that are also called as
 * plain functions `(db, ...)` (the payment ledger, the receipt routes and tests call them that
 * way). Each store is a factory object (`createSignalStore(db)`, like `createPaymentStore`) that
 * prepares its statements once; this memo keeps the function form from preparing them per call.
 * New code should create the store once and hold it.
 */
export function perConnection<K extends object, T>(create: (key: K) => T): (key: K) => T {
  const made = new WeakMap<K, T>();
  return (key) => {
    let t = made.get(key);
    if (t === undefined) {
      t = create(key);
      made.set(key, t);
    }
    return t;
  };
}
