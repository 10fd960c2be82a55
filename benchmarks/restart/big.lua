-- wrk script for benchmarks/run-restart.sh: PUT 64 KiB values to 256 rotating keys
local body = '{"v":"' .. string.rep("x", 65536 - 8) .. '"}'
local n = 0
request = function()
  n = n + 1
  return wrk.format("PUT", "/big/k" .. (n % 256) .. ".json?ns=restart", {["Content-Type"]="application/json"}, body)
end
