#!/bin/bash
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
unset JAVA_TOOL_OPTIONS
F=(--enable-native-access=ALL-UNNAMED -Ducxffm.leakDetection=false -Dio.netty.leakDetection.level=disabled -XX:+UseSerialGC -Xms256m -Xmx512m -XX:-UsePerfData --sun-misc-unsafe-memory-access=allow)
for rep in 1 2 3; do
  for v in old new; do
    echo "=== $v rep $rep $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    java "${F[@]}" -cp /tmp/$v.jar io.github.ucxffm.bench.transport.TransportBench --root /work/main --out /tmp/abres-$v "$@" 2>&1 | grep -E "^(echo|grpc|  )" | grep -v "^  --"
  done
done
