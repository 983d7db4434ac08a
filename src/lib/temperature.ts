// The vocabulary of a temperature reading, below both the city catalog and the bucket arithmetic
// that each use it (buckets/ must not import cities/: both are layer 2, docs/architecture.md).

export type TempUnit = 'C' | 'F';
/**
 * Which extreme of the city-local day a market resolves on: the daily high (the spec's markets)
 * or the daily low ("Lowest temperature in <city> on <date>"). Each (city, kind) is its own stream.
 */
export type MarketKind = 'high' | 'low';
