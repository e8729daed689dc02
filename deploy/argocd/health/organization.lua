-- Argo CD health of an agentry.dev Organization: Healthy once the operator has made or adopted its
-- namespace and closed it with a NetworkPolicy (Ready=True for this generation).
local hs = notObservedYet(obj)
if hs ~= nil then
  return hs
end
local ready = conditionsOf(obj)["Ready"] or {}
hs = { status = "Progressing", message = ready.message or "waiting for the operator" }
if ready.status == "True" then
  hs.status = "Healthy"
elseif ready.reason == "NamespaceFailed" then
  hs.status = "Degraded"
end
return hs
