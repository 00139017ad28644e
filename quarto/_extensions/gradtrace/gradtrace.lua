-- {{< gradtrace "x*y + x" values="x=2,y=3" step=all >}}: a backward pass drawn at render time.
--
-- Runs `gradtrace quarto --to FORMAT -- PROGRAM key=value ...` (the gradtrace command must be
-- on PATH, or named by the GRADTRACE environment variable) and inserts what it prints: HTML
-- for html and revealjs (in revealjs, step=all is one figure whose steps are fragments: add
-- `revealjs-plugins: [gradtrace]` to the document), Markdown image lines for other formats.
-- Every option is checked by the command; a program that cannot run shows its error box and
-- the message is logged as a warning.

local function text(value)
  if value == nil then return "" end
  if type(value) == "string" then return value end
  return pandoc.utils.stringify(value)
end

local function target()
  if quarto.doc.is_format("revealjs") then return "revealjs" end
  if quarto.doc.is_format("html:js") then return "html" end
  return "markdown"
end

-- The command's arguments: the program first (after `--`, so one starting with - is still the
-- program), then the options as key=value, in name order so a build is repeatable.
local function command_args(program, kwargs, to)
  local args = { "quarto", "--to", to, "--", program }
  local names = {}
  for name, _ in pairs(kwargs) do table.insert(names, name) end
  table.sort(names)
  for _, name in ipairs(names) do
    table.insert(args, name .. "=" .. text(kwargs[name]))
  end
  return args
end

return {
  ["gradtrace"] = function(args, kwargs)
    local program = text(args[1])
    local to = target()
    local command = os.getenv("GRADTRACE") or "gradtrace"
    local ok, out = pcall(pandoc.pipe, command, command_args(program, kwargs, to), "")
    if not ok then
      -- pandoc.pipe's error carries what the command printed: the error box (its message went
      -- to stderr, above this warning). A string error means the command was not found.
      local printed = type(out) == "table" and out.output or ""
      local why = printed ~= "" and "see the message above" or tostring(out)
      quarto.log.warning("gradtrace: cannot draw " .. program .. ": " .. why)
      if printed ~= "" and to ~= "markdown" then
        return pandoc.RawBlock("html", printed)
      end
      return pandoc.Para({ pandoc.Strong({ pandoc.Str("gradtrace: cannot draw " .. program) }) })
    end
    if to == "markdown" then
      return pandoc.read(out, "markdown").blocks
    end
    return pandoc.RawBlock("html", out)
  end,
}
