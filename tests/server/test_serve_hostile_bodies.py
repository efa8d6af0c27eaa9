"""Compressed and nested request bodies: decoded whole, or refused before anything is
acknowledged. A 200 for part of a body would lose the rest (the sender forgets it)."""

from __future__ import annotations

import gzip
import json
import urllib.error
import urllib.request

import pytest
import zstandard
from google.rpc import status_pb2

from tests.server.agent_traces import fixture_request, rekeyed, span_count, wait_until


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def in_two_parts(body: bytes, encoding: str) -> bytes:
    """``body`` compressed as two gzip members or two zstd frames, split mid-message."""
    half = len(body) // 2
    if encoding == "gzip":
        return gzip.compress(body[:half]) + gzip.compress(body[half:])
    zc = zstandard.ZstdCompressor()
    return zc.compress(body[:half]) + zc.compress(body[half:])


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
def test_a_body_of_two_members_or_frames_is_received_whole(serve, encoding: str) -> None:
    bg = serve()
    req, tid = rekeyed(fixture_request("d_forbidden_tool"))
    body = in_two_parts(req.SerializeToString(), encoding)
    headers = {"Content-Type": "application/x-protobuf", "Content-Encoding": encoding}
    status, _ = post(bg.http_url + "/v1/traces", body, headers)
    assert status == 200
    assert bg.stats()["received"]["http.traces"] == span_count(req)
    wait_until(lambda: any(v.trace_id == tid for v in bg.emitter.verdicts), what="verdict")


@pytest.mark.parametrize("encoding", ["gzip", "zstd"])
@pytest.mark.parametrize("cut", [1, 7, 20])
def test_a_truncated_body_is_refused_and_nothing_is_buffered(
    serve, encoding: str, cut: int
) -> None:
    bg = serve()
    req, _ = rekeyed(fixture_request("a_happy"))
    body = in_two_parts(req.SerializeToString(), encoding)[:-cut]
    headers = {"Content-Type": "application/x-protobuf", "Content-Encoding": encoding}
    status, answer = post(bg.http_url + "/v1/traces", body, headers)
    assert status == 400
    assert "truncated" in status_pb2.Status.FromString(answer).message
    snapshot = bg.stats()
    assert snapshot["received"].get("http.traces", 0) == 0
    assert snapshot["buffered_spans"] == 0


def test_json_nested_ten_thousand_levels_is_a_400_naming_where(serve) -> None:
    bg = serve()
    leaf = '{"stringValue": "leaf"}'
    value = '{"arrayValue": {"values": [' * 10_000 + leaf + "]}}" * 10_000
    body = (
        '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": '
        '"0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "root", '
        '"startTimeUnixNano": "1", "endTimeUnixNano": "2", '
        f'"attributes": [{{"key": "deep", "value": {value}}}]}}]}}]}}]}}'
    ).encode()
    status, answer = post(bg.http_url + "/v1/traces", body, {"Content-Type": "application/json"})
    assert status == 400
    message = json.loads(answer)["message"]
    assert "nests more than 256 levels deep (at byte" in message
    assert bg.stats()["rejected"], "counted as a rejection, not an internal error"
