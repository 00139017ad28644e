"""The rooms' keys in Redis and the Lua scripts that change them (app/rooms/redis_hub.py).

Per room CODE:
    gradtrace:room:CODE              hash: nonce (of its key), seq (HINCRBY), state, qid,
                                     question, revealed, active (last activity), orphan (when
                                     its last instructor left; absent while one is connected)
    gradtrace:room:CODE:students     sorted set: member id -> when a replica last saw it
    gradtrace:room:CODE:instructors  sorted set: instructor socket id -> the same
    gradtrace:room:CODE:answers:QID  hash: member id -> answer key (one hash per question)
    gradtrace:addr:CODE:ADDRESS      sorted set: the room's members from one client address
    gradtrace:ended:CODE             the nonce of an ended room's key (it is not put back)
and for all rooms:
    gradtrace:rooms                  sorted set: code -> last activity (counts max_rooms)
    gradtrace:by:ADDRESS             sorted set: the rooms an address made (max_rooms_per_address)
    gradtrace:epoch                  a random word: gone means Redis lost everything
    gradtrace:secrets                the secrets that sign instructor keys (app/rooms/codes.py)
A room's keys expire when it ends by itself: room_idle_seconds after its last activity, or
room_orphan_seconds after its last instructor left, whichever is first (each script sets the
TTL from `active` and `orphan`). Each change is one script, so that it is atomic: a state's
seq, its storing and its PUBLISH on the bus happen together.
"""

from __future__ import annotations

from app.config import Settings
from app.rooms.refusals import RoomError, full_of_rooms, gone, too_many_rooms, was_ended

PREFIX = "gradtrace:"
INDEX = PREFIX + "rooms"
BUS = PREFIX + "bus"
EPOCH = PREFIX + "epoch"
SECRETS = PREFIX + "secrets"
ENDED_SECONDS = 3600  # how long an ended room's key is kept from putting it back

# Every room script's first lines. KEYS: the room, the index, then the script's own. ARGV:
# code, idle seconds, orphan seconds, the bus, then the script's own.
HEAD = """
local room = KEYS[1]
local students = room .. ':students'
local instructors = room .. ':instructors'
local code, idle, orphan, bus = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
-- the room ends idle seconds after its last activity, or orphan seconds after its last
-- instructor left, whichever is first: every key of it expires then
local function expire()
  local h = redis.call('HMGET', room, 'active', 'orphan', 'qid')
  local t = now()
  local left = tonumber(h[1] or t) + idle - t
  if h[2] then left = math.min(left, tonumber(h[2]) + orphan - t) end
  local ttl = math.max(1, math.floor(left + 0.5))
  for _, k in ipairs({room, students, instructors}) do redis.call('EXPIRE', k, ttl) end
  if h[3] then redis.call('EXPIRE', room .. ':answers:' .. h[3], ttl) end
  return ttl
end
local function touch()
  local t = now()
  redis.call('HSET', room, 'active', string.format('%.3f', t))
  redis.call('ZADD', KEYS[2], 'XX', t, code)
  return expire()
end
local function publish(kind, body) redis.call('PUBLISH', bus, code .. ' ' .. kind .. body) end
"""
# KEYS +: the address's rooms, the ended mark. ARGV +: nonce, state, max rooms, max per
# address, seq, qid or '', question or '', revealed, restoring.
CREATE = """
local t = now()
if redis.call('EXISTS', room) == 1 then return 0 end
if ARGV[13] == '1' and redis.call('GET', KEYS[4]) == ARGV[5] then return -3 end
for _, c in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
  if redis.call('EXISTS', '{ROOM}' .. c) == 0 then redis.call('ZREM', KEYS[3], c) end
end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[8]) then return -2 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[7]) then
  for _, c in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    if redis.call('EXISTS', '{ROOM}' .. c) == 0 then redis.call('ZREM', KEYS[2], c) end
  end
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[7]) then return -1 end
end
local at = string.format('%.3f', t)
redis.call('HSET', room, 'nonce', ARGV[5], 'seq', ARGV[9], 'state', ARGV[6],
           'revealed', ARGV[12], 'active', at, 'orphan', at)
if ARGV[10] ~= '' then redis.call('HSET', room, 'qid', ARGV[10], 'question', ARGV[11]) end
redis.call('ZADD', KEYS[2], t, code)
redis.call('ZADD', KEYS[3], t, code)
redis.call('EXPIRE', KEYS[3], math.ceil(idle))
expire()
return 1
"""
STATE = """
if redis.call('EXISTS', room) == 0 then return -1 end
local s = redis.call('HINCRBY', room, 'seq', 1)
redis.call('HSET', room, 'state', ARGV[5])
touch()
publish('T', s .. '|{"type":"state","seq":' .. s .. ',"state":' .. ARGV[5] .. '}')
return s
"""
# KEYS +: the address's members. ARGV +: member id, role, max students, stale seconds, max
# members per address, socket id.
JOIN = """
if redis.call('EXISTS', room) == 0 then return -1 end
local t = now()
local stale = tonumber(ARGV[8])
if ARGV[6] == 'student' then
  redis.call('ZREMRANGEBYSCORE', students, '-inf', t - stale)
  if not redis.call('ZSCORE', students, ARGV[5]) then
    if redis.call('ZCARD', students) >= tonumber(ARGV[7]) then return -2 end
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', t - stale)
    if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[9]) then return -3 end
  end
  redis.call('ZADD', students, t, ARGV[5])
  redis.call('ZADD', KEYS[3], t, ARGV[5])
  redis.call('EXPIRE', KEYS[3], math.ceil(stale * 2))
  publish('E', 'presence')
else
  redis.call('ZADD', instructors, t, ARGV[10])
  redis.call('HDEL', room, 'orphan')
end
touch()
return 1
"""
# KEYS +: the address's members. ARGV +: member or socket id, role, stale seconds, still here.
LEAVE = """
if redis.call('EXISTS', room) == 0 then return 0 end
if ARGV[6] == 'student' then
  if ARGV[8] == '0' then
    redis.call('ZREM', students, ARGV[5])
    redis.call('ZREM', KEYS[3], ARGV[5])
  end
  publish('E', 'presence')
else
  redis.call('ZREM', instructors, ARGV[5])
  if redis.call('ZCOUNT', instructors, now() - tonumber(ARGV[7]), '+inf') == 0 then
    redis.call('HSET', room, 'orphan', string.format('%.3f', now()))
    expire()
  end
end
return 1
"""
# ARGV +: stale seconds, n, then n pairs (member id, its address's key), then instructor
# socket ids. 0: the room is gone.
HEARTBEAT = """
if redis.call('EXISTS', room) == 0 then return 0 end
local t = now()
local stale = tonumber(ARGV[5])
local i = 7
for _ = 1, tonumber(ARGV[6]) do
  redis.call('ZADD', students, t, ARGV[i])
  redis.call('ZADD', ARGV[i + 1], t, ARGV[i])
  redis.call('EXPIRE', ARGV[i + 1], math.ceil(stale * 2))
  i = i + 2
end
while i <= #ARGV do
  redis.call('ZADD', instructors, t, ARGV[i])
  i = i + 1
end
redis.call('ZREMRANGEBYSCORE', instructors, '-inf', t - stale)
if redis.call('ZCARD', instructors) == 0 and not redis.call('HGET', room, 'orphan') then
  redis.call('HSET', room, 'orphan', string.format('%.3f', t))
end
expire()
return 1
"""
COUNT = """
return redis.call('ZCOUNT', students, now() - tonumber(ARGV[5]), '+inf')
"""
# ARGV +: member id. {seq, state, question or false, revealed, the member's answer or false}
LATEST = """
local h = redis.call('HMGET', room, 'seq', 'state', 'question', 'revealed', 'qid')
if not h[1] then return false end
local mine = false
if h[5] then mine = redis.call('HGET', room .. ':answers:' .. h[5], ARGV[5]) end
return {h[1], h[2], h[3], h[4], mine}
"""
# {question, answer keys...}, or false
TALLY = """
local h = redis.call('HMGET', room, 'question', 'qid')
if not h[1] then return false end
local out = {h[1]}
for _, v in ipairs(redis.call('HVALS', room .. ':answers:' .. h[2])) do out[#out + 1] = v end
return out
"""
# ARGV +: qid, question json, message to students, message to instructors
ASK = """
if redis.call('EXISTS', room) == 0 then return -1 end
local old = redis.call('HGET', room, 'qid')
if old then redis.call('DEL', room .. ':answers:' .. old) end
redis.call('HSET', room, 'qid', ARGV[5], 'question', ARGV[6], 'revealed', '0')
touch()
publish('S', ARGV[7])
publish('I', ARGV[8])
publish('E', 'tally')
return 1
"""
# ARGV +: qid, member id, key
ANSWER = """
if redis.call('EXISTS', room) == 0 then return -1 end
if redis.call('HGET', room, 'qid') ~= ARGV[5] then return -2 end
if redis.call('HGET', room, 'revealed') == '1' then return -3 end
redis.call('HSET', room .. ':answers:' .. ARGV[5], ARGV[6], ARGV[7])
-- activity, but a class answering at once touches the room once a second, not per answer
if now() - tonumber(redis.call('HGET', room, 'active') or 0) > 1 then touch() end
publish('E', 'tally')
return 1
"""
# ARGV +: qid. Returns {question json, answer keys...}, or a number when refused.
REVEAL = """
if redis.call('EXISTS', room) == 0 then return -1 end
if redis.call('HGET', room, 'qid') ~= ARGV[5] then return -2 end
if redis.call('HGET', room, 'revealed') == '1' then return -3 end
redis.call('HSET', room, 'revealed', '1')
touch()
local out = {redis.call('HGET', room, 'question')}
for _, v in ipairs(redis.call('HVALS', room .. ':answers:' .. ARGV[5])) do out[#out + 1] = v end
return out
"""
# KEYS +: the ended mark. ARGV +: reason, how long the mark stays
END = """
if redis.call('EXISTS', room) == 0 then return 0 end
local h = redis.call('HMGET', room, 'qid', 'nonce')
if h[1] then redis.call('DEL', room .. ':answers:' .. h[1]) end
redis.call('DEL', room, students, instructors)
redis.call('ZREM', KEYS[2], code)
redis.call('SET', KEYS[3], h[2] or '', 'EX', ARGV[6])
publish('E', 'ended:' .. ARGV[5])
return 1
"""
# KEYS: the secrets. ARGV: 'first' and a fresh secret (added only if there is none), or
# 'share' and the secrets this replica knows (all added). Returns them all.
SHARE_SECRETS = """
if ARGV[1] == 'share' or redis.call('SCARD', KEYS[1]) == 0 then
  for i = 2, #ARGV do redis.call('SADD', KEYS[1], ARGV[i]) end
end
return redis.call('SMEMBERS', KEYS[1])
"""
ROOM_SCRIPTS = {"create": CREATE, "state": STATE, "join": JOIN, "leave": LEAVE,
                "heartbeat": HEARTBEAT, "count": COUNT, "latest": LATEST, "tally": TALLY,
                "ask": ASK, "answer": ANSWER, "reveal": REVEAL, "end": END}  # fmt: skip


def room_key(code: str) -> str:
    return f"{PREFIX}room:{code}"


def by_address(address: str) -> str:
    return f"{PREFIX}by:{address}"


def of_address(code: str, address: str) -> str:
    return f"{PREFIX}addr:{code}:{address}"


def ended_key(code: str) -> str:
    return f"{PREFIX}ended:{code}"


def refuse_create(made: int, s: Settings, code: str) -> None:
    """CREATE's refusals (-1, -2, -3) as the client is told them."""
    if made == -1:
        raise full_of_rooms(s.max_rooms)
    if made == -2:
        raise too_many_rooms(s.max_rooms_per_address)
    if made == -3:
        raise was_ended(code)


def refuse_answer(done: int, code: str, qid: str) -> None:
    """ANSWER's and REVEAL's refusals (-1, -2, -3) as the client is told them."""
    if done == -1:
        raise gone(code)
    if done == -2:
        raise RoomError("closed", f"no open question {qid!r}")
    if done == -3:
        raise RoomError("closed", f"question {qid!r} has been revealed: answers are closed")
