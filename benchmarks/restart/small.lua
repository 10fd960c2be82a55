-- wrk script for benchmarks/run-restart.sh: PUT small values to 4096 rotating keys
local n = 0
request = function()
  n = n + 1
  return wrk.format("PUT", "/small/k" .. (n % 4096) .. ".json?ns=restart&print=silent", {["Content-Type"]="application/json"}, '{"name":"small","n":' .. n .. '}')
end
