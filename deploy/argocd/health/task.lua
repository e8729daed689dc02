-- Argo CD health of an agentry.dev Task: Progressing while a prompt is pending or running (or a new
-- prompt is not yet observed), Healthy once finished (completed or canceled), Degraded when its
-- latest prompt failed or archiving its events to object storage keeps failing.
local hs = notObservedYet(obj, "status")
if hs ~= nil then
  return hs
end
local status = obj.status
local archived = conditionsOf(obj)["Archived"] or {}
local prompts = status.prompts or {}
local latest = prompts[#prompts] or {}
hs = { status = "Healthy", message = status.status }
if status.status == "running" then
  hs.status = "Progressing"
  hs.message = "a prompt is pending or running"
elseif status.status == "failed" then
  hs.status = "Degraded"
  hs.message = "the latest prompt failed"
  if latest.error ~= nil then
    hs.message = hs.message .. ": " .. latest.error
  end
elseif archived.status == "False" and archived.reason == "ArchiveFailed" then
  hs.status = "Degraded"
  hs.message = archived.message or "archiving the prompts' events failed"
end
return hs
