-- wrk script of bench/earning.py: POST /api/v1/transactions for a random customer by card, a new
-- idempotency key per request, three line items (one of them the product campaign's sku).
-- Arguments: <call: transaction> <customers file> <token> <key prefix>. The customers file holds one
-- "<id> <card>" line per customer of the vendor whose token is given, or, for several vendors, one
-- "<id> <card> <vendor id> <token>" line per customer: each request then goes with its customer's
-- vendor's token (and X-Bench-Vendor, which names the vendor to the raw app; the service ignores it).

local token, prefix
local cards = {}
local vendors = {}
local counter = 0
local threads = {}
local items = '[{"name":"Croissant","quantity":2,"unit_price":250,"sku":"CROISSANT"},'
  .. '{"name":"Coffee","quantity":1,"unit_price":300,"sku":"COFFEE"},'
  .. '{"name":"Newspaper","quantity":1,"unit_price":250}]'

function setup(thread)
  thread:set("number", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  token, prefix = args[3], args[4] .. "-" .. number .. "-"
  for line in io.lines(args[2]) do
    local card, vendor, own = line:match("^%d+ (%S+) (%d+) (%S+)$")
    if card == nil then
      card = line:match("^%d+ (%S+)$")
    else
      vendors[#cards + 1] = {vendor, "Bearer " .. own}
    end
    table.insert(cards, card)
  end
  math.randomseed(os.time() * 100 + number)
end

function request()
  counter = counter + 1
  local n = math.random(#cards)
  local card, shop = cards[n], vendors[n]
  local headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
  if shop ~= nil then
    headers["X-Bench-Vendor"], headers["Authorization"] = shop[1], shop[2]
  end
  return wrk.format("POST", "/api/v1/transactions", headers,
    '{"identifier":"' .. card .. '","idempotency_key":"' .. prefix .. counter
      .. '","total_amount":1050,"items":' .. items .. '}')
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
