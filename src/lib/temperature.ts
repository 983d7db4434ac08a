// The vocabulary of a temperature reading, below both the city catalog and the bucket arithmetic
// that each use it (buckets/ must not import cities/: both are layer 2, docs/architecture.md).

export type TempUnit = 'C' | 'F';
/** The extreme of the city-local day a market resolves on; each (city, kind) is its own stream. */
export type MarketKind = 'high' | 'low';
