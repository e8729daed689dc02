-- Argo CD health of an agentry.dev WorkspacePool (a warm pool): Healthy while it holds its desired
-- ready workspaces (Ready=True), Degraded when members cannot be made or start (RefillFailed) or the
-- spec is invalid (InvalidSpec), Progressing while it refills and while the operator has not observed
-- this generation.
local hs = notObservedYet(obj)
if hs ~= nil then
  return hs
end
local ready = conditionsOf(obj)["Ready"] or {}
local counts = tostring(obj.status.ready or 0) .. "/" .. tostring(obj.status.desired or 0) .. " ready"
hs = { status = "Progressing", message = counts .. ": " .. (ready.message or "waiting for the operator") }
if ready.status == "True" then
  hs.status = "Healthy"
elseif ready.reason == "RefillFailed" or ready.reason == "InvalidSpec" then
  hs.status = "Degraded"
end
return hs
