-- wrk script: PUT a small value (64 keep-alive connections each keep one request in flight).
wrk.method = "PUT"
wrk.body = '{"name":"small","n":1}'
wrk.headers["Content-Type"] = "application/json"
