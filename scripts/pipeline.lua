-- wrk script: each write carries PIPELINE requests (default 10), the
-- usual wrk.format x N; wrk counts the requests in the string and reads
-- that many answers before writing the next batch. Used by scripts/bench
-- for the pipelined closed-model cell: wrk -t1 -c50 -s scripts/pipeline.lua URL
local depth = tonumber(os.getenv("PIPELINE") or "10")

init = function(args)
  local r = {}
  for i = 1, depth do
    r[i] = wrk.format(nil)
  end
  req = table.concat(r)
end

request = function()
  return req
end
