-- A recursive-descent parser and a serialiser: encodes generated records
-- as JSON, parses the text back, and checks that both agree. Objects are
-- written with sorted keys, so the text does not depend on the order of
-- a table traversal.

math.randomseed(424242)

local encode

local function encodeString(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    if c == "\n" then return "\\n" end
    return string.format("\\u%04x", c:byte())
  end) .. '"'
end

function encode(v, out)
  local t = type(v)
  if t == "table" then
    if #v > 0 or next(v) == nil then
      out[#out + 1] = "["
      for i = 1, #v do
        if i > 1 then out[#out + 1] = "," end
        encode(v[i], out)
      end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do keys[#keys + 1] = k end
      table.sort(keys)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = encodeString(k)
        out[#out + 1] = ":"
        encode(v[k], out)
      end
      out[#out + 1] = "}"
    end
  elseif t == "string" then
    out[#out + 1] = encodeString(v)
  elseif t == "number" then
    if math.type(v) == "integer" then
      out[#out + 1] = string.format("%d", v)
    else
      out[#out + 1] = string.format("%.17g", v)
    end
  elseif t == "boolean" then
    out[#out + 1] = v and "true" or "false"
  else
    out[#out + 1] = "null"
  end
end

local Parser = {}
Parser.__index = Parser

local function newParser(s)
  return setmetatable({ s = s, i = 1 }, Parser)
end

function Parser:space()
  self.i = self.s:find("[^ \t\r\n]", self.i) or #self.s + 1
end

function Parser:value()
  self:space()
  local c = self.s:sub(self.i, self.i)
  if c == "{" then
    return self:object()
  elseif c == "[" then
    return self:array()
  elseif c == '"' then
    return self:string()
  elseif c == "t" then
    self.i = self.i + 4
    return true
  elseif c == "f" then
    self.i = self.i + 5
    return false
  elseif c == "n" then
    self.i = self.i + 4
    return nil
  end
  return self:number()
end

function Parser:number()
  local s, e = self.s:find("^-?%d+%.?%d*[eE]?[-+]?%d*", self.i)
  local text = self.s:sub(s, e)
  self.i = e + 1
  return math.tointeger(tonumber(text)) or tonumber(text)
end

local escapes = { n = "\n", t = "\t", r = "\r", b = "\b", f = "\f", ['"'] = '"', ["\\"] = "\\", ["/"] = "/" }

function Parser:string()
  local buf = {}
  local i = self.i + 1
  local s = self.s
  while true do
    local c = s:byte(i)
    if c == 34 then -- '"'
      break
    elseif c == 92 then -- '\\'
      local e = s:sub(i + 1, i + 1)
      if e == "u" then
        buf[#buf + 1] = string.char(tonumber(s:sub(i + 2, i + 5), 16))
        i = i + 6
      else
        buf[#buf + 1] = escapes[e]
        i = i + 2
      end
    else
      local j = s:find('["\\]', i)
      buf[#buf + 1] = s:sub(i, j - 1)
      i = j
    end
  end
  self.i = i + 1
  return table.concat(buf)
end

function Parser:array()
  local a = {}
  self.i = self.i + 1
  self:space()
  if self.s:sub(self.i, self.i) == "]" then
    self.i = self.i + 1
    return a
  end
  while true do
    a[#a + 1] = self:value()
    self:space()
    local c = self.s:sub(self.i, self.i)
    self.i = self.i + 1
    if c == "]" then return a end
  end
end

function Parser:object()
  local o = {}
  self.i = self.i + 1
  self:space()
  if self.s:sub(self.i, self.i) == "}" then
    self.i = self.i + 1
    return o
  end
  while true do
    self:space()
    local k = self:string()
    self:space()
    self.i = self.i + 1 -- ':'
    o[k] = self:value()
    self:space()
    local c = self.s:sub(self.i, self.i)
    self.i = self.i + 1
    if c == "}" then return o end
  end
end

local names = { "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta" }

local function record(id, depth)
  local r = {
    id = id,
    name = names[math.random(#names)] .. "-" .. id,
    score = math.random(0, 1000000) / 1000,
    active = math.random() < 0.5,
    tags = {},
    note = (id % 5 == 0) and 'quote " and \\ backslash\n' or "plain",
  }
  for i = 1, math.random(0, 5) do
    r.tags[i] = names[math.random(#names)]
  end
  if depth > 0 then
    r.children = {}
    for i = 1, math.random(1, 3) do
      r.children[i] = record(id * 10 + i, depth - 1)
    end
  end
  return r
end

local function equal(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b end
  for k, v in pairs(a) do
    if not equal(v, b[k]) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

local total, bytes, same = 0, 0, 0
for round = 1, 3 do
  local data = {}
  for i = 1, 150 do
    data[i] = record(round * 1000 + i, 3)
  end
  local out = {}
  encode(data, out)
  local text = table.concat(out)
  local back = newParser(text):value()
  local again = {}
  encode(back, again)
  local text2 = table.concat(again)
  total = total + #back
  bytes = bytes + #text
  if text == text2 and equal(data, back) then same = same + 1 end
end
io.write(string.format("records: %d, bytes: %d, round trips equal: %d of 3\n", total, bytes, same))
