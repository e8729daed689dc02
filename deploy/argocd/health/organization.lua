-- Argo CD health of an agentry.dev Organization: Healthy once the operator has made or adopted its
-- namespace and closed it with a NetworkPolicy (Ready=True for this generation).
local hs = { status = "Progressing", message = "waiting for the operator" }
local status = obj.status
if status == nil or status.observedGeneration == nil then
  return hs
end
if obj.metadata.generation ~= nil and status.observedGeneration < obj.metadata.generation then
  hs.message = "waiting for the operator to observe generation " .. tostring(obj.metadata.generation)
  return hs
end
for _, condition in ipairs(status.conditions or {}) do
  if condition.type == "Ready" then
    hs.message = condition.message or ""
    if condition.status == "True" then
      hs.status = "Healthy"
    elseif condition.reason == "NamespaceFailed" then
      hs.status = "Degraded"
    end
  end
end
return hs
