
‰
Í

service.name

codex_exec
%
telemetry.sdk.name
opentelemetry

service.version	
0.171.0
!
telemetry.sdk.version
0.31.0
 
telemetry.sdk.language
rust

env	
capture

	host.name
vm¶


codex_otel.log_only®	INFO2#

event.name
codex.startup_phase2-
startup.phase
thread_start_create_thread2
startup.status
ready2
duration_ms
1742-
event.timestamp
2026-12-01T18:12:39.017Z29
conversation.id&
$01a232cf-093a-70d0-854f-02fa148b4e4b2
app.version	
0.171.02

originator

codex_exec2
terminal.type
dumb2
model
gpt-5-codex2
slug
gpt-5-codexY¨ü¨Ç3íb.event otel/src/events/session_telemetry.rs:380¦	INFO2#

event.name
codex.startup_phase2%
startup.phase
thread_start_total2
startup.status
ready2
duration_ms
3432-
event.timestamp
2026-12-01T18:12:39.179Z29
conversation.id&
$01a232cf-093a-70d0-854f-02fa148b4e4b2
app.version	
0.171.02

originator

codex_exec2
terminal.type
dumb2
model
gpt-5-codex2
slug
gpt-5-codexYå¼ ²Ç3íb.event otel/src/events/session_telemetry.rs:380Â	INFO2!

event.name
codex.user_prompt2
prompt_length
802\
promptR
Pcalc.add is wrong; fix it so tests/test_calc.py passes. Do not change the tests.2-
event.timestamp
2026-12-01T18:12:39.690Z29
conversation.id&
$01a232cf-093a-70d0-854f-02fa148b4e4b2
app.version	
0.171.02

originator

codex_exec2
terminal.type
dumb2
model
gpt-5-codex2
slug
gpt-5-codexYÏ·ÑÇ3íb/event otel/src/events/session_telemetry.rs:1234