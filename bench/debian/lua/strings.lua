-- String handling: builds a text from a fixed-seed generator, then counts
-- words with gmatch, rewrites it with gsub, formats, searches with
-- patterns and sorts. Output is sorted, so it does not depend on the
-- order of a table traversal.

math.randomseed(20240611)

local syllables = { "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ya", "ze",
  "an", "el", "is", "on", "ur", "ba", "de", "fi", "go", "hu" }

local vocabulary = {}
for i = 1, 600 do
  local parts = {}
  for j = 1, math.random(1, 4) do
    parts[j] = syllables[math.random(#syllables)]
  end
  vocabulary[i] = table.concat(parts)
end

-- A skewed choice, so that a few words are very common.
local function word()
  local r = math.random()
  return vocabulary[1 + math.floor(r * r * r * #vocabulary)]
end

local lines = {}
for i = 1, 6000 do
  local ws = {}
  for j = 1, math.random(6, 14) do
    ws[j] = word()
  end
  if i % 7 == 0 then
    ws[#ws + 1] = tostring(math.random(1, 99999))
  end
  lines[i] = table.concat(ws, " ") .. (i % 3 == 0 and "." or ",")
end
local text = table.concat(lines, "\n")
io.write("text: ", #text, " bytes, ", #lines, " lines\n")

-- Word frequencies.
local freq, total = {}, 0
for w in text:gmatch("%a+") do
  freq[w] = (freq[w] or 0) + 1
  total = total + 1
end
local words = {}
for w in pairs(freq) do words[#words + 1] = w end
table.sort(words, function(a, b)
  if freq[a] ~= freq[b] then return freq[a] > freq[b] end
  return a < b
end)
io.write("words: ", total, ", distinct: ", #words, "\n")
for i = 1, 10 do
  io.write(string.format("%2d %-16s %6d\n", i, words[i], freq[words[i]]))
end

-- Rewriting: capitalise, swap pairs of words, replace numbers.
local caps = text:gsub("(%a)(%a*)", function(a, b) return a:upper() .. b end)
local swapped, nswaps = text:gsub("(%a+) (%a+)", "%2 %1")
local numbers = 0
local renumbered = text:gsub("%d+", function(d)
  numbers = numbers + 1
  return string.format("<%05d>", tonumber(d) % 1000)
end)
io.write("caps: ", #caps, ", swaps: ", nswaps, ", swapped: ", #swapped,
  ", numbers: ", numbers, ", renumbered: ", #renumbered, "\n")

-- Searching.
local found = 0
for i = 1, 200 do
  local w = vocabulary[i]
  local init = 1
  while true do
    local s, e = text:find(w, init, true)
    if not s then break end
    found = found + 1
    init = e + 1
  end
end
local vowels = select(2, text:gsub("[aeiou]", ""))
io.write("plain matches: ", found, ", vowels: ", vowels, "\n")

-- A checksum over bytes, with string.byte and integer arithmetic.
local h = 0
for i = 1, #text, 3 do
  h = (h * 31 + text:byte(i)) % 4294967296
end
io.write(string.format("checksum: %08x\n", h))

-- Reversed lines, sorted.
local rev = {}
for i = 1, #lines, 5 do
  rev[#rev + 1] = lines[i]:reverse():sub(1, 20)
end
table.sort(rev)
io.write("first: ", rev[1], "\nlast: ", rev[#rev], "\n")
