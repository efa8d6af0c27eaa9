
Ä
Í
%
telemetry.sdk.name
opentelemetry

	host.name
vm

service.version	
0.171.0

service.name

codex_exec
!
telemetry.sdk.version
0.31.0
 
telemetry.sdk.language
rust

env	
capturer

codex_otel::metrics::clientQDEBUG*
flushing OTEL metricsYnú“ë4íb$event otel/src/metrics/client.rs:330