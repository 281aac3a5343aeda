#!/usr/bin/env python3
"""Signs COUNT / 4 accounts up, each signed in on 4 devices (concurrently), and writes wrk scripts
that send a different session's access token on each request, each wrk thread cycling through its
own half: so concurrent requests read different sessions, as an app's users do, not one row.

usage: reads_tokens.py BASE_URL COUNT API_KEY OUT_DIR
writes OUT_DIR/bearer.lua (GET with Authorization), OUT_DIR/introspect.lua (POST
/sessions/introspect with the API key, the token in the body), OUT_DIR/signin.lua (POST
/auth/email/login, the accounts in turn), OUT_DIR/refresh.lua (POST /auth/token/refresh, each
session's refresh token chained: the one an answer brings is the next one sent) and
OUT_DIR/tokens.txt (one a line).
"""
import json
import random
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor

base, count, api_key, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
SESSIONS_PER_ACCOUNT = 4  # a phone, a tablet, a laptop, a browser: what /me/sessions lists
password = "violet-harbor-91"
run = f"{random.getrandbits(48):x}"


def post(path, body):
    request = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)


def sign_up(index):
    email = f"bench-reads-{run}-{index}@example.com"
    sessions = [post("/auth/email/signup", {"email": email, "password": password})]
    sessions += [post("/auth/email/login", {"email": email, "password": password}) for _ in range(SESSIONS_PER_ACCOUNT - 1)]
    return email, sessions


with ThreadPoolExecutor(max_workers=4) as pool:
    signed_up = list(pool.map(sign_up, range(max(1, count // SESSIONS_PER_ACCOUNT))))
emails = [email for email, _ in signed_up]
# Interleaved, so neighbouring requests read different accounts.
sessions = [account[i] for i in range(SESSIONS_PER_ACCOUNT) for _, account in signed_up]
tokens = [session["access_token"] for session in sessions]
refresh_tokens = [session["refresh_token"] for session in sessions]
assert len(set(tokens)) == len(tokens)

lua_tokens = "local tokens = {" + ",".join(f'"{token}"' for token in tokens) + "}\n"
# setup runs in the main state once per thread; init and request in each thread's own state.
common = """local next_thread = 0
function setup(thread)
  thread:set("thread_index", next_thread)
  next_thread = next_thread + 1
end
local requests, position = {}, 0
function init(args)
  local half = math.floor(#tokens / 2)
  for i = 1, half do requests[i] = make(tokens[thread_index * half + i]) end
end
function request()
  position = position % #requests + 1
  return requests[position]
end
"""
with open(f"{out}/bearer.lua", "w") as file:
    file.write(lua_tokens + common + """function make(token)
  return wrk.format(nil, nil, {["Authorization"] = "Bearer " .. token}, nil)
end
""")
with open(f"{out}/introspect.lua", "w") as file:
    file.write(lua_tokens + common + """function make(token)
  return wrk.format("POST", nil, {["Authorization"] = "Bearer %s", ["Content-Type"] = "application/json"},
    '{"token":"' .. token .. '"}')
end
""" % api_key)
with open(f"{out}/tokens.txt", "w") as file:
    file.write("\n".join(tokens) + "\n")

# Sign-ins: the accounts in turn (each answer a new session).
with open(f"{out}/signin.lua", "w") as file:
    file.write("local emails = {" + ",".join(f'"{email}"' for email in emails) + "}\n" + """local position = 0
function request()
  position = position % #emails + 1
  return wrk.format("POST", "/auth/email/login", {["Content-Type"] = "application/json"},
    '{"email":"' .. emails[position] .. '","password":"PASSWORD"}')
end
""".replace("PASSWORD", password))
# Refreshes: each thread holds its half of the sessions' refresh tokens; a request takes one, its
# answer gives the next (a token is spent once), so at most as many requests are in flight as
# the thread holds tokens.
with open(f"{out}/refresh.lua", "w") as file:
    file.write("local tokens = {" + ",".join(f'"{token}"' for token in refresh_tokens) + "}\n" + """local next_thread = 0
function setup(thread)
  thread:set("thread_index", next_thread)
  next_thread = next_thread + 1
end
local ready = {}
function init(args)
  local half = math.floor(#tokens / 2)
  for i = 1, half do ready[#ready + 1] = tokens[thread_index * half + i] end
end
function request()
  local token = table.remove(ready) or "lr_none"
  return wrk.format("POST", "/auth/token/refresh", {["Content-Type"] = "application/json"},
    '{"refresh_token":"' .. token .. '"}')
end
function response(status, headers, body)
  local token = body and string.match(body, '"refresh_token"%s*:%s*"([^"]+)"')
  if token then ready[#ready + 1] = token end
end
""")
