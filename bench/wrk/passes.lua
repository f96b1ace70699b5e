-- wrk script of bench/passes.py: GET /api/v1/customers/{id}/wallet-pass?platform=<platform> for a
-- random customer. Arguments: <platform> <customers file> <token> <unused prefix>. The customers file
-- holds one "<id> <card>" line per customer.

local platform, token
local ids = {}
local threads = {}

function setup(thread)
  thread:set("number", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  platform, token = args[1], args[3]
  for line in io.lines(args[2]) do
    table.insert(ids, (line:match("^(%d+) ")))
  end
  math.randomseed(os.time() * 100 + number)
end

function request()
  return wrk.format("GET", "/api/v1/customers/" .. ids[math.random(#ids)] .. "/wallet-pass?platform=" .. platform,
    { ["Authorization"] = "Bearer " .. token })
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
