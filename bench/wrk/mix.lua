-- wrk script of bench/mix.py: a till's mix over many vendors. Arguments: <call> <customers file>
-- <shops file> <key prefix>. The customers file holds "<vendor id> <customer id> <card>" lines, the
-- shops file "<vendor id> <token> <reward id>" lines. Each request picks a random customer (and so
-- its vendor and that vendor's token) and a call by weight: 70 purchases with one to three lines,
-- 15 lookups, 10 reward lists, 5 redemptions; the code of each redemption answered is verified by a
-- later request of the same thread (so verifies add about 5 more). X-Bench-Vendor names the vendor
-- for the raw app, which has no auth; the service ignores it.

local prefix
local customers, shops, vendor_of = {}, {}, {}
local counter = 0
local pending = {}
local threads = {}

function setup(thread)
  thread:set("number", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  prefix = args[4] .. "-" .. number .. "-"
  for line in io.lines(args[2]) do
    local vendor, id, card = line:match("^(%d+) (%d+) (%S+)$")
    table.insert(customers, {vendor, id, card})
    vendor_of[id] = vendor
  end
  for line in io.lines(args[3]) do
    local vendor, token, reward = line:match("^(%d+) (%S+) (%d+)$")
    shops[vendor] = {"Bearer " .. token, reward}
  end
  math.randomseed(os.time() * 100 + number)
end

local items = {
  '{"name":"Coffee","quantity":1,"unit_price":250,"sku":"COFFEE"}',
  '{"name":"Croissant","quantity":2,"unit_price":175,"sku":"CROISSANT"}',
  '{"name":"Juice","quantity":1,"unit_price":300,"sku":"JUICE"}',
}
local totals = {250, 600, 900}

function request()
  counter = counter + 1
  local verify = table.remove(pending)
  if verify ~= nil then
    return wrk.format("POST", "/api/v1/redemptions/" .. verify[2] .. "/verify",
      {["Authorization"] = shops[verify[1]][1], ["X-Bench-Vendor"] = verify[1]})
  end
  local c = customers[math.random(#customers)]
  local vendor, card = c[1], c[3]
  local shop = shops[vendor]
  local headers = {["Authorization"] = shop[1], ["X-Bench-Vendor"] = vendor, ["Content-Type"] = "application/json"}
  local roll = math.random(100)
  if roll <= 70 then
    local lines = math.random(3)
    return wrk.format("POST", "/api/v1/transactions", headers,
      '{"identifier":"' .. card .. '","total_amount":' .. totals[lines] .. ',"idempotency_key":"' ..
      prefix .. counter .. '","items":[' .. table.concat(items, ",", 1, lines) .. ']}')
  elseif roll <= 85 then
    return wrk.format("GET", "/api/v1/customers/lookup?identifier=" .. card, headers)
  elseif roll <= 95 then
    return wrk.format("GET", "/api/v1/rewards", headers)
  end
  return wrk.format("POST", "/api/v1/redemptions", headers,
    '{"identifier":"' .. card .. '","reward_id":' .. shop[2] .. ',"idempotency_key":"' .. prefix .. counter .. '"}')
end

-- a redemption's answer names its code and customer: the customer's vendor verifies the code
function response(status, headers, body)
  if status == 201 then
    local code = body:match('"confirmation_code":"([A-Z0-9%-]+)"')
    if code ~= nil then
      table.insert(pending, {vendor_of[body:match('"customer_id":(%d+)')], code})
    end
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p95_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95), latency:percentile(99),
    latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
