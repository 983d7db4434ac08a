/**
 * Rough climatology for the simulated feed, per active city: annual mean daily high (°C), the
 * seasonal swing either side of it (°C), the typical day-night range (°C) and the hemisphere.
 * Plausible, not authoritative: it only has to make curves that look like the city's weather.
 */
type Climate = { meanHighC: number; seasonalC: number; diurnalC: number; south?: boolean };

/** A northern-hemisphere city's climate; `S` is a southern one's (seasons shifted half a year). */
const C = (meanHighC: number, seasonalC: number, diurnalC: number): Climate => ({ meanHighC, seasonalC, diurnalC });
const S = (...a: Parameters<typeof C>): Climate => ({ ...C(...a), south: true });

export const CLIMATE: Readonly<Record<string, Climate>> = {
  nyc: C(17, 12, 8),
  chicago: C(15, 15, 9),
  miami: C(29, 3.5, 7),
  dallas: C(25, 11, 11),
  seattle: C(16, 8, 8),
  atlanta: C(22, 9, 10),
  'los-angeles': C(22, 3.5, 7),
  'san-francisco': C(19, 3, 7),
  houston: C(27, 8, 10),
  austin: C(27, 9, 12),
  denver: C(18, 12, 14),
  toronto: C(13, 14, 9),
  'mexico-city': C(24, 3, 13),
  'buenos-aires': S(23, 7, 9),
  'sao-paulo': S(26, 3.5, 9),
  london: C(15, 7, 7),
  paris: C(16, 8, 8),
  munich: C(14, 10, 9),
  milan: C(18, 11, 9),
  madrid: C(20, 10, 12),
  warsaw: C(13, 11, 8),
  amsterdam: C(14, 7, 7),
  helsinki: C(10, 12, 7),
  ankara: C(18, 13, 13),
  'tel-aviv': C(25, 6, 8),
  jeddah: C(35, 4, 9),
  'cape-town': S(22, 4.5, 9),
  lucknow: C(32, 7, 11),
  karachi: C(32, 4, 9),
  seoul: C(17, 13, 8),
  tokyo: C(20, 10, 7),
  shanghai: C(21, 11, 7),
  beijing: C(19, 15, 11),
  singapore: C(31, 1, 7),
  'kuala-lumpur': C(32, 1, 8),
  manila: C(31, 1.5, 7),
  wellington: S(16, 3.5, 6),
};

/** Fallback for a city without a row (inactive cities, test catalogs). */
export const DEFAULT_CLIMATE: Climate = C(20, 8, 9);
