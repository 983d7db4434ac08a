import { DEFAULT_KIND, KIND_RULES, type RuleKind } from '../buckets/rule-kinds.ts';
import type { CityRecord } from '../cities/catalog.ts';
import type { MarketResolutionBody } from '../cities/schemas.ts';
import { icaoOf } from './judge.ts';
import type { DayRule } from './store.ts';

/**
 * What a market resolves on, for an agent to judge before paying: from the day's own rule once
 * the poller has read it (`from: market-rule`), the catalog's until then. Without a rule the
 * observatories (hko, cwa) publish tenths and floor them; the rest is Weather Underground's table.
 */
export function marketResolution(city: CityRecord, rule: DayRule | null): MarketResolutionBody {
  const source = city.resolutionSource;
  const kind: RuleKind = rule?.kind ?? (source === 'hko' || source === 'cwa' ? source : DEFAULT_KIND);
  return {
    station: rule ? icaoOf(rule.station) : city.station,
    unit: rule?.unit ?? city.unit,
    ruleKind: kind,
    rounding: KIND_RULES[kind].rounding,
    roundingRule: KIND_RULES[kind].describe,
    resolutionSource: rule?.source ?? city.resolutionSource,
    resolutionUrl: rule?.url ?? city.stationPage,
    bucketWidth: city.bucketWidth,
    from: rule ? 'market-rule' : 'catalog',
  };
}
