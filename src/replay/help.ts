/** Replay's help, apart from the command: main.ts shows it at every start (src/cli-commands.ts). */
export const REPLAY_HELP = `Replay (offline check of a past city-day through the live engine):
  replay --city <slug> --date YYYY-MM-DD [--observations <file>] [--format wu|metar|csv]
         [--market <gamma-event.json> | --buckets "<label>,<label>,..."] [--json] [--force]
      observations: weather.com JSON, METAR JSON or CSV time,temp,unit (format guessed unless --format);
      without a file they are fetched from WEATHER_SOURCE (wu: any past day, needs WU_API_KEY;
      metar: the last 48 hours). Without --market/--buckets the event is fetched from GAMMA_URL and
      its resolution compared. The event's own resolution rule is shown; a rule naming another station
      than the city's (or HKO/CWA) is refused unless --force. A NOAA-rule day is fetched from METAR.
      Exit codes: 0 ran (whatever the match), 1 upstream failure, 2 bad input.
`;
