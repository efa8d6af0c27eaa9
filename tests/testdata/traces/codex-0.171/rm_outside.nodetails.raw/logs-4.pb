
Ä
Í

service.name

codex_exec
!
telemetry.sdk.version
0.31.0

env	
capture

service.version	
0.171.0
 
telemetry.sdk.language
rust
%
telemetry.sdk.name
opentelemetry

	host.name
vmr

codex_otel::metrics::clientQDEBUG*
flushing OTEL metricsYy`µ[î4íb$event otel/src/metrics/client.rs:330