import type { CityRecord } from '../cities/catalog.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { judgeRule, type ObservableSource } from '../resolution/judge.ts';
import type { RuleStore } from '../resolution/store.ts';
import type { MarketEvent } from '../sources/market/types.ts';
import type { WeatherSource } from '../sources/weather/types.ts';

/**
 * Match or pause (spec: resolution-source awareness): the weather feed a city-day's market rule
 * calls for, or null when the day is paused. The verdict is stored with the day's first rule;
 * a pause is logged and counted once, when it begins.
 */
export function createDayJudge(deps: {
  rules: RuleStore;
  clock: Clock;
  logger: Logger;
  feedFor(source: ObservableSource): WeatherSource | undefined;
  /** The city's pause reason for the operator page (null: not paused). */
  notePaused(slug: string, reason: string | null): void;
  /** A city newly paused for the day (the /metrics counter). */
  onPause?(slug: string): void;
}) {
  /** Per city, the last judged (day, rule, verdict, feed) and its feed: an unchanged day costs no transaction. */
  const judged = new Map<string, { key: string; feed: WeatherSource | null }>();

  return function judgeDay(city: CityRecord, date: string, event: MarketEvent): WeatherSource | null {
    const verdict = judgeRule(event.rule, city, (s) => deps.feedFor(s) !== undefined);
    const feed = verdict.status === 'ok' ? deps.feedFor(verdict.observe)! : null;
    // Settling the same inputs again gives the same answer, so an unchanged day costs no transaction.
    const key = JSON.stringify([date, event.rule, verdict, feed?.name ?? null]);
    const last = judged.get(city.slug);
    if (last?.key === key) return last.feed;
    const day = deps.rules.settle({
      city: city.slug,
      date,
      rule: event.rule,
      verdict,
      feed: feed?.name ?? null,
      nowMs: deps.clock.now(),
    });
    deps.notePaused(city.slug, day.status === 'paused' ? day.reason : null);
    judged.set(city.slug, { key, feed: day.status === 'ok' ? feed : null });
    if (day.status === 'ok') return feed;
    if (day.newlyPaused) {
      deps.onPause?.(city.slug);
      deps.logger.warn('city paused for the day: market rule does not match', {
        city: city.slug,
        date,
        rule: event.rule,
        reason: day.reason,
      });
    }
    return null;
  };
}
