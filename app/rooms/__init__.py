"""The live classroom (spec/classroom.md): rooms that one instructor drives and students follow,
kept in this process or, with GRADTRACE_REDIS_URL, in Redis so that replicas share them."""
