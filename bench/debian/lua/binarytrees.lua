-- Allocation and garbage collection: the binary-trees benchmark of the
-- Computer Language Benchmarks Game, at a fixed depth.

local function bottomUp(depth)
  if depth == 0 then
    return {}
  end
  depth = depth - 1
  return { bottomUp(depth), bottomUp(depth) }
end

local function check(tree)
  if tree[1] then
    return 1 + check(tree[1]) + check(tree[2])
  end
  return 1
end

local N = 14
local mindepth = 4
local maxdepth = math.max(mindepth + 2, N)

local stretch = maxdepth + 1
io.write(string.format("stretch tree of depth %d\t check: %d\n", stretch, check(bottomUp(stretch))))

local longlived = bottomUp(maxdepth)

for depth = mindepth, maxdepth, 2 do
  local iterations = 2 ^ (maxdepth - depth + mindepth)
  local sum = 0
  for _ = 1, iterations do
    sum = sum + check(bottomUp(depth))
  end
  io.write(string.format("%d\t trees of depth %d\t check: %d\n", iterations, depth, sum))
end

io.write(string.format("long lived tree of depth %d\t check: %d\n", maxdepth, check(longlived)))
