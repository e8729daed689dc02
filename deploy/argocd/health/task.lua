-- Argo CD health of an agentry.dev Task: Progressing while a prompt is pending or running (or a new
-- prompt is not yet observed), Healthy once finished (completed or canceled), Degraded when its
-- latest prompt failed or archiving its events to object storage keeps failing.
local hs = { status = "Progressing", message = "waiting for the operator" }
local status = obj.status
if status == nil or status.observedGeneration == nil or status.status == nil then
  return hs
end
if obj.metadata.generation ~= nil and status.observedGeneration < obj.metadata.generation then
  hs.message = "waiting for the operator to observe generation " .. tostring(obj.metadata.generation)
  return hs
end
local archived = nil
for _, condition in ipairs(status.conditions or {}) do
  if condition.type == "Archived" then
    archived = condition
  end
end
local prompts = status.prompts or {}
local latest = prompts[#prompts]
if status.status == "running" then
  hs.message = "a prompt is pending or running"
elseif status.status == "failed" then
  hs.status = "Degraded"
  hs.message = "the latest prompt failed"
  if latest ~= nil and latest.error ~= nil then
    hs.message = hs.message .. ": " .. latest.error
  end
elseif archived ~= nil and archived.status == "False" and archived.reason == "ArchiveFailed" then
  hs.status = "Degraded"
  hs.message = archived.message or "archiving the prompts' events failed"
else
  hs.status = "Healthy"
  hs.message = status.status
end
return hs
