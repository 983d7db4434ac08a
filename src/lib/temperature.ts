// A reading's vocabulary, below both cities/ and buckets/, which may not import each other (both layer 2).

export type TempUnit = 'C' | 'F';
/** The extreme of the city-local day a market resolves on; each (city, kind) is its own stream. */
export type MarketKind = 'high' | 'low';
