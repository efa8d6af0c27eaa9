//! One test per rule of the module doc, with the messages the Python decoders gave.

use super::*;

const TRACE: &str = "5b8efff798038103d269b633813fc60c";
const SPAN: &str = "eee19b7ec3c1b174";

/// A request of one span: the given fields over a valid base.
fn one_span(fields: &str) -> String {
    let sep = if fields.is_empty() { "" } else { "," };
    format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"{TRACE}","spanId":"{SPAN}","name":"chat","kind":3,"startTimeUnixNano":"1544712660000000000","endTimeUnixNano":"1544712661000000000"{sep}{fields}}}]}}]}}]}}"#
    )
}

fn ok(json: &str) -> Batch {
    decode(json.as_bytes()).unwrap_or_else(|e| panic!("{e:?} for {json}"))
}

fn problems(batch: &Batch) -> Vec<&str> {
    batch.problems.listed.iter().map(String::as_str).collect()
}

/// A body whose one span carries the attribute value `value`; returns it and the problems.
fn attribute(value: &str) -> (AnyValue, Vec<String>) {
    let batch = ok(&one_span(&format!(
        r#""attributes":[{{"key":"k","value":{value}}}]"#
    )));
    let span = &batch.spans[0];
    assert_eq!(span.attributes.len(), 1);
    (
        span.attributes[0].value.clone(),
        batch.problems.listed.clone(),
    )
}

const WHERE: &str = "resourceSpans[0].scopeSpans[0].spans[0]";

#[test]
fn a_body_allocates_each_short_key_and_value_once() {
    let kv = r#"{"key":"gen_ai.system","value":{"stringValue":"openai"}}"#;
    let body = format!(
        r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"gen_ai.system","value":{{"kvlistValue":{{"values":[{kv}]}}}}}}]}},
        "scopeSpans":[{{"spans":[{{"traceId":"{TRACE}","spanId":"{SPAN}","name":"chat",
        "attributes":[{kv}],"events":[{{"name":"e","attributes":[{kv}]}}]}}]}}]}}]}}"#
    );
    let batch = ok(&body);
    assert_eq!(problems(&batch), Vec::<&str>::new());
    let span = &batch.spans[0];
    let resource = &span.resource.attributes[0];
    let AnyValue::KvList(nested) = &resource.value else {
        panic!("{resource:?}")
    };
    let keys = [
        &span.attributes[0].key,
        &span.events[0].attributes[0].key,
        &resource.key,
        &nested[0].key,
    ];
    assert!(
        keys.iter().all(|key| Text::ptr_eq(key, keys[0])),
        "{keys:?}"
    );
    let values = [
        &span.attributes[0].value,
        &span.events[0].attributes[0].value,
        &nested[0].value,
    ];
    for value in values {
        let (AnyValue::Str(a), AnyValue::Str(b)) = (value, values[0]) else {
            panic!("{values:?}")
        };
        assert!(Text::ptr_eq(a, b), "{values:?}");
    }
}

#[test]
fn a_canonical_span_decodes_every_field() {
    let batch = ok(&one_span(
        r#""parentSpanId":"00f067aa0ba902b7","status":{"code":2,"message":"boom"},
        "events":[{"timeUnixNano":"5","name":"e","attributes":[{"key":"a","value":{"intValue":"1"}}]}],
        "links":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331"}]"#,
    ));
    assert_eq!(problems(&batch), Vec::<&str>::new());
    let span = &batch.spans[0];
    assert_eq!(span.trace_id, hex_id::<16>(TRACE).unwrap());
    assert_eq!(span.parent_span_id, hex_id::<8>("00f067aa0ba902b7"));
    assert_eq!((span.kind, span.status_code), (3, 2));
    assert_eq!(span.status_message, "boom");
    assert_eq!(
        (span.start_ns, span.end_ns),
        (1544712660000000000, 1544712661000000000)
    );
    assert_eq!(span.events[0].name, "e");
    assert_eq!(span.events[0].time_ns, 5);
    assert_eq!(span.events[0].attributes[0].value, AnyValue::Int(1));
    assert_eq!(
        span.links[0].span_id,
        hex_id::<8>("b7ad6b7169203331").unwrap()
    );
}

#[test]
fn the_request_must_be_an_object_with_a_known_key() {
    assert_eq!(
        decode(b"[1]"),
        Err(JsonError::Request(
            "expected an OTLP/JSON request object, got a JSON list".into()
        ))
    );
    assert_eq!(
        decode(br#"{"spans":[],"a":1}"#),
        Err(JsonError::Request(
            "not an OTLP/JSON request: expected a resourceSpans, resourceLogs or \
             resourceMetrics key, got keys ['a', 'spans']"
                .into()
        ))
    );
    assert_eq!(
        decode(br#"{"resourceSpans":5}"#),
        Err(JsonError::Request(
            "resourceSpans must be a list, got 5".into()
        ))
    );
    assert_eq!(ok("{}"), Batch::default());
    assert_eq!(ok(r#"{"resourceSpans":null}"#), Batch::default());
}

#[test]
fn metrics_are_counted_as_ignored() {
    let batch = ok(
        r#"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"a"},{"name":"b"}]},"x"]},7,
        {"scope_metrics":[{"metrics":[{}]}]}]}"#,
    );
    assert_eq!(batch.ignored, 3);
}

#[test]
fn snake_case_keys_read_like_camel_case() {
    let camel = ok(&one_span(r#""parentSpanId":"00f067aa0ba902b7""#));
    let snake = ok(&format!(
        r#"{{"resource_spans":[{{"scope_spans":[{{"spans":[{{"trace_id":"{TRACE}","span_id":"{SPAN}","parent_span_id":"00f067aa0ba902b7","name":"chat","kind":3,"start_time_unix_nano":"1544712660000000000","end_time_unix_nano":"1544712661000000000"}}]}}]}}]}}"#
    ));
    assert_eq!(camel, snake);
}

#[test]
fn a_span_with_trace_id_reads_its_other_ids_in_camel_case_only() {
    let batch = ok(&format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"{TRACE}","span_id":"{SPAN}"}}]}}]}}]}}"#
    ));
    assert_eq!(
        problems(&batch),
        [format!("{WHERE}: spanId is missing; span rejected")]
    );
}

#[test]
fn ids_are_hex_in_either_case_or_base64_of_the_exact_size() {
    let upper = ok(&one_span(r#""traceId":"5B8EFFF798038103D269B633813FC60C""#));
    assert_eq!(upper.spans[0].trace_id, hex_id::<16>(TRACE).unwrap());
    // base64 of the same 16 bytes
    let b64 = ok(&one_span(r#""traceId":"W47/95gDgQPSabYzgT/GDA==""#));
    assert_eq!(b64.spans[0].trace_id, hex_id::<16>(TRACE).unwrap());
    assert!(b64.problems.listed.is_empty());
}

#[test]
fn a_span_without_usable_ids_is_rejected_with_the_reason() {
    for (fields, reason) in [
        (
            r#""traceId":"xyz""#,
            "traceId must be 32 hex digits (16 bytes), got 'xyz'",
        ),
        (
            r#""traceId":"00000000000000000000000000000000""#,
            "traceId is all zeros, which OTLP defines as invalid",
        ),
        (r#""traceId":null"#, "traceId is missing"),
        (r##""traceId":"""##, "traceId is missing"),
        (r#""spanId":5"#, "spanId must be a hex string, got 5"),
        (
            r#""parentSpanId":"abc""#,
            "parentSpanId must be 16 hex digits (8 bytes), got 'abc'",
        ),
        (r#""name":null"#, "name must be a string, got None"),
        (
            r#""startTimeUnixNano":"soon""#,
            "startTimeUnixNano must be an integer (decimal string), got 'soon'",
        ),
        (
            r#""endTimeUnixNano":true"#,
            "endTimeUnixNano must be an integer (decimal string), got True",
        ),
        (
            r#""endTimeUnixNano":"-5""#,
            "endTimeUnixNano must be from 0 to 2^64-1, got '-5'",
        ),
    ] {
        let batch = ok(&one_span(fields));
        assert!(batch.spans.is_empty(), "{fields}");
        assert_eq!(batch.rejected, 1);
        assert_eq!(
            problems(&batch),
            [format!("{WHERE}: {reason}; span rejected")],
            "{fields}"
        );
    }
}

#[test]
fn an_empty_or_all_zero_parent_means_no_parent() {
    for parent in [r#""""#, "null", "0", r#""0000000000000000""#] {
        let batch = ok(&one_span(&format!(r#""parentSpanId":{parent}"#)));
        assert_eq!(batch.spans[0].parent_span_id, None, "{parent}");
        assert!(batch.problems.listed.is_empty());
    }
}

#[test]
fn times_accept_numbers_and_python_integer_spellings() {
    for (value, want) in [
        ("12", 12),
        ("\"12\"", 12),
        ("12.0", 12),
        ("\" 1_2 \"", 12),
        ("null", 0),
    ] {
        let batch = ok(&one_span(&format!(r#""startTimeUnixNano":{value}"#)));
        assert_eq!(batch.spans[0].start_ns, want, "{value}");
    }
    let max = ok(&one_span(r#""startTimeUnixNano":"18446744073709551615""#));
    assert_eq!(max.spans[0].start_ns, u64::MAX);
}

#[test]
fn enums_are_numbers_or_names_and_anything_else_is_unspecified() {
    let named = ok(&one_span(
        r#""kind":"SPAN_KIND_CLIENT","status":{"code":"STATUS_CODE_ERROR"}"#,
    ));
    assert_eq!((named.spans[0].kind, named.spans[0].status_code), (3, 2));
    let unknown = ok(&one_span(
        r#""kind":"SPAN_KIND_TELEPATHIC","status":{"code":7,"message":5}"#,
    ));
    assert_eq!(
        (unknown.spans[0].kind, unknown.spans[0].status_code),
        (0, 0)
    );
    assert_eq!(unknown.spans[0].status_message, "5");
    assert_eq!(
        problems(&unknown),
        [
            format!(
                "{WHERE}.kind: unknown value 'SPAN_KIND_TELEPATHIC'; read as SPAN_KIND_UNSPECIFIED"
            ),
            format!("{WHERE}.status.code: unknown value 7; read as STATUS_CODE_UNSET"),
        ]
    );
    let null_kind = ok(&one_span(r#""kind":null,"status":{}"#));
    assert!(null_kind.problems.listed.is_empty());
    let bad_status = ok(&one_span(r#""status":"ok""#));
    assert_eq!(
        problems(&bad_status),
        [format!("{WHERE}.status: must be an object, got 'ok'")]
    );
}

#[test]
fn every_any_value_variant_converts() {
    assert_eq!(
        attribute(r#"{"stringValue":"x"}"#).0,
        AnyValue::Str("x".into())
    );
    assert_eq!(attribute(r#"{"bool_value":true}"#).0, AnyValue::Bool(true));
    assert_eq!(
        attribute(r#"{"intValue":"9007199254740993"}"#).0,
        AnyValue::Int(9007199254740993)
    );
    assert_eq!(attribute(r#"{"intValue":-7}"#).0, AnyValue::Int(-7));
    assert_eq!(attribute(r#"{"doubleValue":0.5}"#).0, AnyValue::Double(0.5));
    assert_eq!(
        attribute(r#"{"doubleValue":"-Infinity"}"#).0,
        AnyValue::Double(f64::NEG_INFINITY)
    );
    assert_eq!(attribute(r#"{"doubleValue":3}"#).0, AnyValue::Double(3.0));
    assert_eq!(
        attribute(r#"{"bytesValue":"AP8="}"#).0,
        AnyValue::Bytes(vec![0, 255])
    );
    assert_eq!(
        attribute(r#"{"bytesValue":"-_8="}"#).0,
        AnyValue::Bytes(vec![0xfb, 0xff])
    );
    assert_eq!(attribute("{}").0, AnyValue::Empty);
    assert_eq!(
        attribute(
            r#"{"arrayValue":{"values":[{"stringValue":"a"},{"kvlistValue":{"values":[{"key":"k","value":{"intValue":"1"}},{"key":"n"}]}},{"arrayValue":{}}]}}"#
        )
        .0,
        AnyValue::Array(vec![
            AnyValue::Str("a".into()),
            AnyValue::KvList(vec![
                KeyValue { key: "k".into(), value: AnyValue::Int(1) },
                KeyValue { key: "n".into(), value: AnyValue::Empty },
            ]),
            AnyValue::Array(vec![]),
        ])
    );
}

#[test]
fn a_malformed_value_reads_as_null_with_the_attribute_named() {
    for (value, reason) in [
        (
            r#"{"intValue":"twelve"}"#,
            "intValue must be a decimal integer, got 'twelve'",
        ),
        (
            r#"{"intValue":"99999999999999999999"}"#,
            "intValue must fit in 64 bits, got '99999999999999999999'",
        ),
        (
            r#"{"intValue":true}"#,
            "intValue must be a decimal integer, got True",
        ),
        (
            r#"{"doubleValue":"x"}"#,
            "doubleValue must be a number, got 'x'",
        ),
        (
            r#"{"stringValue":5}"#,
            "stringValue must be a string, got 5",
        ),
        (
            r#"{"boolValue":"yes"}"#,
            "boolValue must be true or false, got 'yes'",
        ),
        (
            r#"{"bytesValue":"A"}"#,
            "bytesValue must be base64, got 'A'",
        ),
        (
            r#"{"bytesValue":1}"#,
            "bytesValue must be a base64 string, got 1",
        ),
        (
            "5",
            "expected an AnyValue object like {'stringValue': ...}, got 5",
        ),
        (r#"{"weird":1}"#, "unknown AnyValue variant 'weird'"),
        (
            r#"{"stringValue":"a","intValue":"1"}"#,
            "an AnyValue holds exactly one variant, got keys ['intValue', 'stringValue']",
        ),
        (
            r#"{"arrayValue":[]}"#,
            "arrayValue must be an object with a 'values' list, got []",
        ),
        (
            r#"{"kvlistValue":{"values":5}}"#,
            "kvlistValue.values must be a list, got 5",
        ),
        (
            r#"{"kvlistValue":{"values":[{"k":1}]}}"#,
            "kvlistValue entries must be {key, value} objects, got {'k': 1}",
        ),
    ] {
        let (got, problems) = attribute(value);
        assert_eq!(got, AnyValue::Empty, "{value}");
        assert_eq!(
            problems,
            [format!("{WHERE}: attribute 'k': {reason}; read as null")],
            "{value}"
        );
    }
}

#[test]
fn lenient_spellings_the_typed_decoder_took_are_kept() {
    // null is an unset field (protobuf JSON mapping): no variant, no problem.
    for value in [
        "null",
        r#"{"stringValue":null}"#,
        r#"{"kvlistValue":{"values":[{"key":"a","value":null}]}}"#,
    ] {
        let (_, problems) = attribute(value);
        assert!(problems.is_empty(), "{value}: {problems:?}");
    }
    assert_eq!(
        attribute(r#"{"stringValue":null,"intValue":"2"}"#).0,
        AnyValue::Int(2)
    );
    assert_eq!(attribute(r#"{"boolValue":"TRUE"}"#).0, AnyValue::Bool(true));
    assert_eq!(attribute(r#"{"intValue":"1e3"}"#).0, AnyValue::Int(1000));
    assert_eq!(attribute(r#"{"intValue":2.0}"#).0, AnyValue::Int(2));
    let batch = ok(&one_span(
        r#""kind":"3","status":{"code":2.0},"startTimeUnixNano":"1.0""#,
    ));
    assert_eq!(
        (
            batch.spans[0].kind,
            batch.spans[0].status_code,
            batch.spans[0].start_ns
        ),
        (3, 2, 1)
    );
    assert!(batch.problems.listed.is_empty());
    let log = ok(&one_log(r#""severityNumber":9.0"#));
    assert_eq!(log.logs[0].severity_number, 9);
}

#[test]
fn values_nest_at_most_sixty_four_arrays() {
    let nest = |levels: usize| {
        "{\"arrayValue\":{\"values\":[".repeat(levels)
            + "{\"stringValue\":\"leaf\"}"
            + &"]}}".repeat(levels)
    };
    assert!(matches!(attribute(&nest(64)).0, AnyValue::Array(_)));
    let (got, problems) = attribute(&nest(65));
    assert_eq!(got, AnyValue::Empty);
    assert_eq!(
        problems,
        [format!(
            "{WHERE}: attribute 'k': AnyValue nests more than 64 arrays/kvlists deep; read as null"
        )]
    );
}

#[test]
fn attribute_lists_keep_dict_semantics_and_skip_malformed_entries() {
    let batch = ok(&one_span(
        r#""attributes":[{"key":"a","value":{"intValue":"bad"}},{"key":"b"},5,{"key":"a","value":{"stringValue":"x"}}]"#,
    ));
    let attrs = &batch.spans[0].attributes;
    assert_eq!(
        attrs.iter().map(|kv| kv.key.as_str()).collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert_eq!(
        attrs[0].value,
        AnyValue::Str("x".into()),
        "the last value wins, unconverted values are not reported"
    );
    assert_eq!(attrs[1].value, AnyValue::Empty);
    assert_eq!(
        problems(&batch),
        [format!(
            "{WHERE}: attributes[2]: expected {{key, value}}, got 5"
        )]
    );
    let not_list = ok(&one_span(r#""attributes":{"a":1}"#));
    assert_eq!(
        problems(&not_list),
        [format!(
            "{WHERE}.attributes: must be a list, got {{'a': 1}}; ignored"
        )]
    );
}

#[test]
fn resource_attributes_are_shared_and_reported_at_the_resource() {
    let batch = ok(&format!(
        r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"svc"}}}},{{"key":"x","value":{{"intValue":"y"}}}},"z"]}},"scopeSpans":[{{"scope":{{"name":"lib","version":2}},"spans":[{{"traceId":"{TRACE}","spanId":"{SPAN}"}},{{"traceId":"{TRACE}","spanId":"{SPAN}"}}]}}]}}]}}"#
    ));
    assert!(Arc::ptr_eq(
        &batch.spans[0].resource,
        &batch.spans[1].resource
    ));
    assert_eq!(
        batch.spans[0].resource.attributes[0].value,
        AnyValue::Str("svc".into())
    );
    assert_eq!(
        (
            batch.spans[0].scope.name.as_str(),
            batch.spans[0].scope.version.as_str()
        ),
        ("lib", "2")
    );
    assert_eq!(
        problems(&batch),
        [
            "resourceSpans[0].resource: attribute 'x': intValue must be a decimal integer, got 'y'; read as null",
            "resourceSpans[0].resource.attributes[2]: expected {key, value}, got 'z'",
        ]
    );
}

#[test]
fn unreadable_structure_is_skipped_with_its_path() {
    let batch = ok(
        r#"{"resourceSpans":[7,{"resource":5},{"scopeSpans":{}},{"scopeSpans":["s",{"spans":"x"},{"spans":[3]}]}]}"#,
    );
    assert_eq!(
        problems(&batch),
        [
            "resourceSpans[0]: expected an object, got 7",
            "resourceSpans[1].resource must be an object, got 5; resource skipped",
            "resourceSpans[2].scopeSpans must be a list, got {}; resource skipped",
            "resourceSpans[3].scopeSpans[0]: expected an object, got 's'",
            "resourceSpans[3].scopeSpans[1].spans: must be a list, got 'x'",
            "resourceSpans[3].scopeSpans[2].spans[0]: expected a span object, got 3; span rejected",
        ]
    );
    assert_eq!(batch.rejected, 1);
}

#[test]
fn bad_events_and_links_are_ignored_and_the_span_kept() {
    let batch = ok(&one_span(
        r#""events":[5,{"name":null,"timeUnixNano":"x"},{"name":7,"time_unix_nano":"3","attributes":5}],
        "links":[{"traceId":"abc","spanId":"b7ad6b7169203331"},"l"]"#,
    ));
    let span = &batch.spans[0];
    assert_eq!(span.events.len(), 1);
    assert_eq!(
        (span.events[0].name.as_str(), span.events[0].time_ns),
        ("7", 3)
    );
    assert!(span.links.is_empty());
    assert_eq!(
        problems(&batch),
        [
            format!("{WHERE}.events[0]: expected an event object, got 5; event ignored"),
            format!("{WHERE}.events[1]: timeUnixNano must be an integer (decimal string), got 'x'; event ignored"),
            format!("{WHERE}.links[0]: traceId must be 32 hex digits (16 bytes), got 'abc'; link ignored"),
            format!("{WHERE}.links[1]: expected a link object, got 'l'; link ignored"),
        ]
    );
    let not_lists = ok(&one_span(r#""events":5,"links":"x""#));
    assert_eq!(
        problems(&not_lists),
        [
            format!("{WHERE}.events: must be a list, got 5; ignored"),
            format!("{WHERE}.links: must be a list, got 'x'; ignored"),
        ]
    );
}

fn one_log(fields: &str) -> String {
    format!(
        r#"{{"resourceLogs":[{{"scopeLogs":[{{"scope":{{"name":"lg"}},"logRecords":[{{{fields}}}]}}]}}]}}"#
    )
}

const LOG: &str = "resourceLogs[0].scopeLogs[0].logRecords[0]";

#[test]
fn log_records_decode_with_event_names_bodies_and_severities() {
    let batch = ok(&one_log(&format!(
        r#""traceId":"{TRACE}","spanId":"{SPAN}","eventName":"gen_ai.choice","observedTimeUnixNano":"9","severityNumber":"SEVERITY_NUMBER_WARN2","body":{{"kvlistValue":{{"values":[{{"key":"a","value":{{"boolValue":false}}}}]}}}}"#
    )));
    let log = &batch.logs[0];
    assert_eq!(log.trace_id, hex_id::<16>(TRACE));
    assert_eq!(log.event_name, "gen_ai.choice");
    assert_eq!((log.time_ns, log.severity_number), (9, 14));
    assert_eq!(log.scope.name, "lg");
    assert!(matches!(&log.body, AnyValue::KvList(kv) if kv[0].value == AnyValue::Bool(false)));
    let legacy = ok(&one_log(
        r#""attributes":[{"key":"event.name","value":{"stringValue":"old"}}],"severityNumber":30"#,
    ));
    assert_eq!(legacy.logs[0].event_name, "old");
    assert_eq!(legacy.logs[0].severity_number, 30);
    assert_eq!(legacy.logs[0].trace_id, None);
}

#[test]
fn log_problems_keep_or_reject_the_record() {
    let batch = ok(&one_log(r#""traceId":"xyz","body":{"intValue":"q"}"#));
    assert_eq!(batch.logs.len(), 1);
    assert_eq!(
        problems(&batch),
        [
            format!("{LOG}: traceId must be 32 hex digits (16 bytes), got 'xyz'; read without span context"),
            format!("{LOG}.body: intValue must be a decimal integer, got 'q'; read as null"),
        ]
    );
    let rejected = ok(&one_log(r#""timeUnixNano":"later""#));
    assert_eq!(rejected.rejected, 1);
    assert_eq!(
        problems(&rejected),
        [format!("{LOG}: timeUnixNano must be an integer (decimal string), got 'later'; log record rejected")]
    );
    let not_list = ok(r#"{"resourceLogs":[{"scopeLogs":[{"logRecords":{"a":1}}]}]}"#);
    assert_eq!(
        problems(&not_list),
        ["resourceLogs[0].scopeLogs[0].logRecords must be a list, got {'a': 1}"]
    );
}

#[test]
fn problems_come_in_document_order() {
    let batch = ok(
        r#"{"resourceLogs":["x",{"scopeLogs":["y",{"logRecords":{"a":1}}]},{"resource":{"attributes":5},"scopeLogs":[]}]}"#,
    );
    assert_eq!(
        problems(&batch),
        [
            "resourceLogs[0]: expected an object, got 'x'",
            "resourceLogs[1].scopeLogs[0]: expected an object, got 'y'",
            "resourceLogs[1].scopeLogs[1].logRecords must be a list, got {'a': 1}",
            "resourceLogs[2].resource.attributes must be a list, got 5; resource skipped",
        ]
    );
}

#[test]
fn problems_are_bounded_per_body() {
    let spans = vec!["1"; 1000].join(",");
    let batch = ok(&format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{spans}]}}]}}]}}"#
    ));
    assert_eq!(batch.rejected, 1000);
    assert_eq!(batch.problems.total(), 1000);
    assert_eq!(
        batch.problems.listed.len(),
        crate::model::MAX_LISTED_PROBLEMS
    );
}

#[test]
fn long_values_are_shown_cut() {
    let long = "x".repeat(500);
    let batch = ok(&one_span(&format!(r#""traceId":"{long}""#)));
    let message = &batch.problems.listed[0];
    assert!(
        message.contains(&format!("got '{}...", "x".repeat(56))),
        "{message}"
    );
}

#[test]
fn documents_of_several_requests_decode_each() {
    let many = decode_many(format!("[{},5]", one_span("")).as_bytes()).unwrap();
    assert_eq!(many.len(), 2);
    assert_eq!(many[0].as_ref().unwrap().spans.len(), 1);
    assert_eq!(
        many[1],
        Err("expected an OTLP/JSON request object, got a JSON int".to_string())
    );
}

#[test]
fn not_json_and_too_deep_refuse_the_body_with_a_location() {
    assert!(matches!(
        decode(b"{\"resourceSpans\": [\n  {,}]}"),
        Err(JsonError::Syntax { line: 2, .. })
    ));
    let deep = one_span(&format!(
        r#""attributes":[{{"key":"k","value":{}{{}}{}}}]"#,
        "{\"arrayValue\":{\"values\":[".repeat(10_000),
        "]}}".repeat(10_000)
    ));
    match decode(deep.as_bytes()) {
        Err(JsonError::TooDeep(message)) => {
            assert!(
                message.starts_with("JSON nests more than 256 levels deep (at byte "),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_input_panics() {
    // Every prefix of a rich body, and a few byte flips of it: an error or a batch, never a panic.
    let body = one_span(
        r#""attributes":[{"key":"a","value":{"arrayValue":{"values":[{"bytesValue":"AP8="}]}}}],
        "events":[{"name":"e"}],"links":[{"traceId":"W47/95gDgQPSabYzgT/GDA==","spanId":"7q0="}]"#,
    );
    let bytes = body.as_bytes();
    for cut in 0..bytes.len() {
        let _ = decode(&bytes[..cut]);
    }
    for i in 0..bytes.len() {
        for b in [b'0', b'"', b'{', b']', b'-', 0xff] {
            let mut flipped = bytes.to_vec();
            flipped[i] = b;
            let _ = decode(&flipped);
        }
    }
}

#[test]
fn dropped_counts_are_read_in_either_spelling_and_a_bad_one_reads_as_dropped() {
    let batch = ok(&one_span(
        r#""droppedAttributesCount":3,"dropped_events_count":"2","droppedLinksCount":1.0,
        "events":[{"timeUnixNano":"5","name":"e","droppedAttributesCount":"4"}],
        "links":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331",
        "dropped_attributes_count":6}]"#,
    ));
    assert_eq!(problems(&batch), Vec::<&str>::new());
    let span = &batch.spans[0];
    assert_eq!(
        (
            span.dropped_attributes_count,
            span.dropped_events_count,
            span.dropped_links_count
        ),
        (3, 2, 1)
    );
    assert_eq!(span.events[0].dropped_attributes_count, 4);
    assert_eq!(span.links[0].dropped_attributes_count, 6);

    let none = ok(&one_span(r#""droppedAttributesCount":null"#));
    assert_eq!(none.spans[0].dropped_attributes_count, 0);
    assert_eq!(problems(&none), Vec::<&str>::new());

    let bad = ok(&one_span(
        r#""droppedAttributesCount":-1,"droppedEventsCount":"4294967296","droppedLinksCount":true,
        "events":[{"timeUnixNano":"5","droppedAttributesCount":"x"}]"#,
    ));
    let span = &bad.spans[0];
    assert_eq!(
        (
            span.dropped_attributes_count,
            span.dropped_events_count,
            span.dropped_links_count,
            span.events[0].dropped_attributes_count
        ),
        (u32::MAX, u32::MAX, u32::MAX, u32::MAX)
    );
    let read_as = "read as 4294967295 (dropped, how many unknown)";
    assert_eq!(
        problems(&bad),
        [
            format!("{WHERE}.events[0].droppedAttributesCount: must be an integer from 0 to 2^32-1, got 'x'; {read_as}"),
            format!("{WHERE}.droppedAttributesCount: must be an integer from 0 to 2^32-1, got -1; {read_as}"),
            format!("{WHERE}.droppedEventsCount: must be an integer from 0 to 2^32-1, got '4294967296'; {read_as}"),
            format!("{WHERE}.droppedLinksCount: must be an integer from 0 to 2^32-1, got True; {read_as}"),
        ]
    );
}

#[test]
fn span_flags_are_kept_and_a_malformed_one_reads_as_nothing_said() {
    let flags = |field: &str| {
        let batch = ok(&one_span(field));
        (batch.spans[0].flags, problems(&batch).len())
    };
    assert_eq!(flags(r#""flags":769"#), (769, 0));
    assert_eq!(flags(r#""flags":"768""#), (768, 0));
    assert_eq!(flags(r#""flags":null"#), (0, 0));
    assert_eq!(flags(r#""flags":-1"#), (0, 1));
    assert_eq!(flags(r#""flags":"remote""#), (0, 1));
}
