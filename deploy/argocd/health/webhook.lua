-- Argo CD health of an agentry.dev Webhook: Degraded when its target asked to stop (410 Gone) or
-- its latest deliveries failed (failureCount counts failed attempts since the last success),
-- Healthy otherwise. A webhook has no spec the operator converges, so nothing is Progressing.
local hs = { status = "Healthy", message = "no delivery yet" }
local status = obj.status or {}
if status.isActive == false then
  hs.status = "Degraded"
  hs.message = "inactive: the target answered 410 Gone; no more deliveries"
elseif status.failureCount ~= nil and status.failureCount > 0 then
  hs.status = "Degraded"
  hs.message = tostring(status.failureCount) .. " failed delivery attempt(s) since the last success"
  if status.lastError ~= nil then
    hs.message = hs.message .. ": " .. status.lastError
  end
elseif status.lastTriggeredAt ~= nil then
  hs.message = "last delivery at " .. status.lastTriggeredAt
end
return hs
