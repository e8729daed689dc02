-- Argo CD health of an agentry.dev AgentComputer (a workspace): Healthy while its runner answers,
-- Suspended while hibernated (stopped on purpose, disk kept), Degraded when it cannot start without
-- a change (provisionError, Ready reason Failed), Progressing otherwise and while the operator has
-- not observed this generation.
local hs = notObservedYet(obj)
if hs ~= nil then
  return hs
end
local conditions = conditionsOf(obj)
local ready = conditions["Ready"] or {}
local hibernated = conditions["Hibernated"] or {}
hs = { status = "Progressing", message = ready.message or "waiting for the operator" }
if obj.status.provisionError ~= nil then
  hs.status = "Degraded"
  hs.message = obj.status.provisionError
elseif ready.status == "False" and ready.reason == "Failed" then
  hs.status = "Degraded"
elseif hibernated.status == "True" then
  hs.status = "Suspended"
  hs.message = "hibernated (" .. tostring(hibernated.reason) .. "): " .. (hibernated.message or "")
elseif ready.status == "True" then
  hs.status = "Healthy"
end
return hs
