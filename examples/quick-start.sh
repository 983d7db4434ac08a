#!/bin/sh
# The README's quick start against a running instance (npm start): the city list, then a city with latestSeq >= 2 and its free sample.
# A fresh start needs a minute or so for that; this waits up to ISOCAST_WAIT seconds (default 200), saying so on stderr.
base=${ISOCAST_SERVER:-http://localhost:8402}
bound=${ISOCAST_WAIT:-200}
case $bound in '' | *[!0-9]*) echo "ISOCAST_WAIT=$bound: give whole seconds, e.g. ISOCAST_WAIT=600" >&2; exit 2 ;; esac
pick='let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).cities.find(c=>c.latestSeq>=2)?.slug??""))'
waited=0 said=
while :; do
  if list=$(curl -sf "$base/v1/cities?sort=recent"); then   # every city with latestSeq, newest signal first
    city=$(printf '%s' "$list" | node -e "$pick")
    [ -n "$city" ] && break
    what="a city with latestSeq >= 2"
  else
    what="isocast to answer at $base"
  fi
  [ "$said" = "$what" ] || echo "waiting for $what (up to $bound s)..." >&2
  said=$what
  if [ "$waited" -ge "$bound" ]; then
    [ -n "$list" ] && printf '%s\n' "$list"
    case $what in
      isocast*) echo "nothing answered at $base within $bound s: start it with npm start, or set ISOCAST_SERVER to its address" >&2 ;;
      *) echo "no city has latestSeq >= 2 yet (a fresh npm start has one within about 3 minutes): run this again, or set ISOCAST_WAIT=600" >&2 ;;
    esac
    exit 1
  fi
  sleep 2
  waited=$((waited + 2))
done
printf '%s\n' "$list"
curl -sSf -w '\n' "$base/v1/sample?city=$city"   # that city's first signal, free
