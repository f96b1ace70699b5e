-- wrk script of bench/request_path.py: a random customer per request, and for the adjustment a new
-- idempotency key per request. Arguments: <call: lookup|adjust> <customers file> <token> <key prefix>.
-- The customers file holds one "<id> <card>" line per customer.

local call, token, prefix
local ids, cardcodes = {}, {}
local counter = 0
local threads = {}
-- no response() callback: wrk counts statuses >= 400 itself (summary.errors.status), at no cost per reply

function setup(thread)
  thread:set("number", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  call, token, prefix = args[1], args[3], args[4] .. "-" .. number .. "-"
  for line in io.lines(args[2]) do
    local id, card = line:match("^(%d+) (%S+)$")
    table.insert(ids, id)
    table.insert(cardcodes, card)
  end
  math.randomseed(os.time() * 100 + number)
end

function request()
  local n = math.random(#ids)
  if call == "lookup" then
    return wrk.format("GET", "/api/v1/customers/lookup?identifier=" .. cardcodes[n],
      { ["Authorization"] = "Bearer " .. token })
  end
  counter = counter + 1
  return wrk.format("POST", "/api/v1/customers/" .. ids[n] .. "/wallet/adjust",
    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" },
    '{"amount":1,"reason":"bench","idempotency_key":"' .. prefix .. counter .. '"}')
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
