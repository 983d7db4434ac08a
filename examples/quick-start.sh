#!/bin/sh
# The README's quick start against a running instance (npm start): a city with latestSeq >= 2 and its free sample.
base=${ISOCAST_SERVER:-http://localhost:8402}
curl -s -w '\n' "$base/v1/cities?sort=recent"   # every city with latestSeq, newest signal first
city=$(curl -s "$base/v1/cities" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).cities.find(c=>c.latestSeq>=2)?.slug??"none yet"))')
curl -s -w '\n' "$base/v1/sample?city=$city"    # that city's first signal, free
