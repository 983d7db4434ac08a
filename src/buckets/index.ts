export { parseLabel, formatLabel, orderBuckets, type BucketRange } from './labels.ts';
export { convertTemp, wholeDegrees, resolveReading } from './rounding.ts';
export { bucketFor, isDead } from './assign.ts';
export { dailyHigh, dailyHighReading, type Observation } from './daily-high.ts';
