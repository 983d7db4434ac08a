/**
 * Every column of `signals`, in table order (schema.sql): the one list a copy of the table reads,
 * so a replica or an export that selects these never drops a column this file forgets.
 * test/db/provenance.test.ts compares it with the table. `payload` is the public JSON, served as is;
 * the columns beside it are what queries filter and aggregate on.
 */
export const SIGNAL_COLUMNS = [
  'city',
  'seq',
  'target_date',
  'new_bucket',
  'observed_at',
  'payload',
  'created_at',
  'reported_at',
  'channel',
  'raw_report',
  'reported_value',
  'reported_unit',
  'reported_precision',
  'available_at',
] as const;

export type SignalColumn = (typeof SIGNAL_COLUMNS)[number];
