-- wrk script of bench/redemptions.py. Arguments: <call: redeem|verify> <data file> <token> <key prefix>
-- <reward id> <wrk threads>. For redeem the data file holds one "<id> <card>" line per customer: a
-- random customer per request and a new idempotency key per request. For verify it holds one
-- confirmation code a line: thread n of N sends codes n, n+N, n+2N ... in order, so each code is
-- verified once; were the codes to run out the thread would start over, and wrk would count the
-- replies (409) as errors.

local call, token, prefix, reward, stride
local cards, codes = {}, {}
local counter = 0
local threads = {}
-- no response() callback: wrk counts statuses >= 400 itself (summary.errors.status), at no cost per reply

function setup(thread)
  thread:set("number", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  call, token, prefix, reward = args[1], args[3], args[4] .. "-" .. number .. "-", args[5]
  stride = tonumber(args[6])
  for line in io.lines(args[2]) do
    if call == "redeem" then
      table.insert(cards, (line:match("^%d+ (%S+)$")))
    else
      table.insert(codes, line)
    end
  end
  counter = number - stride
  math.randomseed(os.time() * 100 + number)
end

local headers = {}

function request()
  headers["Authorization"] = "Bearer " .. token
  if call == "verify" then
    counter = counter + stride
    if counter > #codes then
      counter = number
    end
    return wrk.format("POST", "/api/v1/redemptions/" .. codes[counter] .. "/verify", headers)
  end
  counter = counter + 1
  headers["Content-Type"] = "application/json"
  return wrk.format("POST", "/api/v1/redemptions", headers,
    '{"identifier":"' .. cards[math.random(#cards)] .. '","reward_id":' .. reward ..
    ',"idempotency_key":"' .. prefix .. counter .. '"}')
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
