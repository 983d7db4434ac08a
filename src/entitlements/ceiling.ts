/**
 * The entitlement rule (spec 3): buying C signals while caught up extends the ceiling by C;
 * buying after falling behind first raises the floor to latestSeq, so a buyer never pays for a
 * backlog they skipped. No purchase before means P = 0.
 */
export function nextCeiling(paidThrough: number | null, latestSeq: number, count: number): number {
  return Math.max(paidThrough ?? 0, latestSeq) + count;
}
