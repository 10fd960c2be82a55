-- wrk script: PUT a small value with requests pipelined on each keep-alive connection, `depth` at a time
-- (`wrk ... -s put-pipelined.lua URL -- DEPTH`, 16 when not given): wrk sends a connection's next batch once the
-- last one is answered.
local batch

function init(args)
    local depth = tonumber(args[1]) or 16
    local one = wrk.format("PUT", nil, { ["Content-Type"] = "application/json" }, '{"name":"small","n":1}')
    batch = string.rep(one, depth)
end

function request()
    return batch
end
