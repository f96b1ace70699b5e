-- wrk script of bench/returns.py: POST /api/v1/transactions/{id}/returns of a random purchase, a new
-- idempotency key per request, 100 cents returned each time (a point back at a point per euro).
-- Arguments: <call: return> <purchases file> <token> <key prefix>. The purchases file holds one
-- "<transaction id>" line per purchase.

local token, prefix
local purchases = {}
local counter = 0
local threads = {}

function setup(thread)
  thread:set("number", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  token, prefix = args[3], args[4] .. "-" .. number .. "-"
  for line in io.lines(args[2]) do
    table.insert(purchases, (line:match("^(%d+)")))
  end
  math.randomseed(os.time() * 100 + number)
end

function request()
  counter = counter + 1
  local id = purchases[math.random(#purchases)]
  return wrk.format("POST", "/api/v1/transactions/" .. id .. "/returns",
    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" },
    '{"idempotency_key":"' .. prefix .. counter .. '","amount":100}')
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
