-- Argo CD health of an agentry.dev AgentComputer (a workspace): Healthy while its runner answers,
-- Suspended while hibernated (stopped on purpose, disk kept), Degraded when it cannot start without
-- a change (provisionError, Ready reason Failed), Progressing otherwise and while the operator has
-- not observed this generation.
local hs = { status = "Progressing", message = "waiting for the operator" }
local status = obj.status
if status == nil or status.observedGeneration == nil then
  return hs
end
if obj.metadata.generation ~= nil and status.observedGeneration < obj.metadata.generation then
  hs.message = "waiting for the operator to observe generation " .. tostring(obj.metadata.generation)
  return hs
end
local conditions = {}
for _, condition in ipairs(status.conditions or {}) do
  conditions[condition.type] = condition
end
local ready = conditions["Ready"]
local hibernated = conditions["Hibernated"]
if status.provisionError ~= nil then
  hs.status = "Degraded"
  hs.message = status.provisionError
elseif ready ~= nil and ready.status == "False" and ready.reason == "Failed" then
  hs.status = "Degraded"
  hs.message = ready.message or "the workload failed"
elseif hibernated ~= nil and hibernated.status == "True" then
  hs.status = "Suspended"
  hs.message = "hibernated (" .. tostring(hibernated.reason) .. "): " .. (hibernated.message or "")
elseif ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or "ready"
elseif ready ~= nil then
  hs.message = ready.message or hs.message
end
return hs
