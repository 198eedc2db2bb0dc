"""Chat answers for ``GET /v1/answers/{id}`` kept in Redis, so any host reads them.

The same promise as the per-host file (``answering/answer_store.py``): an answer per
owner, for ``ttl`` seconds, and at most ``max_bytes`` of them in all, oldest first out.
Each write is one Lua script, so hosts writing at once never go past the cap: it
sweeps expired answers, adds the new one and evicts the oldest until the total fits.
Redis's clock dates every answer, and an answer's age is read against the time to
live in force, so lowering ``answers_ttl`` takes effect at once. Every body also
carries a Redis expiry, so Redis frees it even if no later write sweeps.

Keys (under the prefix): ``answers:index`` (id by creation time), ``answers:sizes``
(bytes by id: the body and owner as stored, and 64 for the rest), ``answers:bytes``
(their total) and ``answers:id:ID`` (a hash: owner, created, body). One
Redis, not a Redis Cluster: the script touches keys it cannot declare in advance.
"""

from __future__ import annotations

import json
import secrets
from typing import Any, cast

from middleware.server.answering.answer_store import ID_PATTERN
from middleware.server.shared.redis_state import SharedRedis

# KEYS: index, sizes, total. ARGV: id, owner, ttl, max_bytes, body, size, body key prefix.
_PUT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local ttl, cap, size = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[6])
local function drop(id)
  local held = tonumber(redis.call('HGET', KEYS[2], id) or '0')
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('DEL', ARGV[7] .. id)
  redis.call('DECRBY', KEYS[3], held)
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - ttl)) do
  drop(id)
end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then drop(ARGV[1]) end
local held = ARGV[7] .. ARGV[1]
redis.call('HSET', held, 'owner', ARGV[2], 'created', tostring(now), 'body', ARGV[5])
redis.call('PEXPIRE', held, math.ceil(ttl * 1000))
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], size)
local total = redis.call('INCRBY', KEYS[3], size)
while total > cap do
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if not oldest then break end
  drop(oldest)
  total = tonumber(redis.call('GET', KEYS[3]) or '0')
end
return total
"""

# KEYS: the answer. ARGV: ttl. Its owner and body while younger than ttl, else nil.
_GET = """
local found = redis.call('HMGET', KEYS[1], 'owner', 'created', 'body')
if not found[3] then return nil end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
if tonumber(found[2]) <= now - tonumber(ARGV[1]) then return nil end
return {found[1], found[3]}
"""
RECORD_BYTES = 64  # an answer's own fields and names beside its body and owner


class SharedAnswerStore:
    """Answers by id for ``ttl`` seconds, at most ``max_bytes`` of them, in Redis."""

    def __init__(self, shared: SharedRedis, *, ttl: float, max_bytes: int) -> None:
        self.shared = shared
        self.ttl = ttl
        self.max_bytes = max_bytes
        self._keys = [shared.key("answers", part) for part in ("index", "sizes", "bytes")]
        self._body_prefix = shared.key("answers", "id", "")
        self._put = shared.client.register_script(_PUT)
        self._get = shared.client.register_script(_GET)

    def put(self, answer_id: str, owner: str, body: dict[str, Any]) -> bool:
        """Keep ``body``; False when it alone is larger than the cap (then not kept).
        StateUnavailable when Redis cannot be reached."""
        text = json.dumps(body, ensure_ascii=False)
        size = len(text.encode("utf-8")) + len(owner.encode("utf-8")) + RECORD_BYTES
        if size > self.max_bytes:
            return False
        args: list[str | float] = [
            answer_id,
            owner,
            self.ttl,
            self.max_bytes,
            text,
            size,
            self._body_prefix,
        ]
        self.shared.call(lambda: self._put(keys=self._keys, args=args), what="kept answers")
        return True

    def get(self, answer_id: str, owner: str) -> dict[str, Any] | None:
        """The answer kept as ``answer_id`` for ``owner``; None when there is none, it
        expired, or it belongs to someone else. StateUnavailable when Redis cannot be
        reached."""
        if not ID_PATTERN.fullmatch(answer_id):
            return None
        key = self._body_prefix + answer_id
        raw = self.shared.call(lambda: self._get(keys=[key], args=[self.ttl]), what="kept answers")
        if raw is None:
            return None
        held_by, text = raw
        if not secrets.compare_digest(bytes(held_by), owner.encode("utf-8")):
            return None
        found: dict[str, Any] = json.loads(text)
        return found

    def ids(self) -> list[str]:
        """Every id held, oldest first (expired ones too, until the next write)."""
        rows: list[bytes] = self.shared.call(
            lambda: cast(list[bytes], self.shared.client.zrange(self._keys[0], 0, -1)),
            what="kept answers",
        )
        return [row.decode() if isinstance(row, bytes) else str(row) for row in rows]

    def size(self) -> int:
        """Bytes of the answers held."""
        total = self.shared.call(
            lambda: cast(bytes | None, self.shared.client.get(self._keys[2])), what="kept answers"
        )
        return int(total or 0)
