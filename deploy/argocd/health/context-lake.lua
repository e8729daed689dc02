-- Argo CD health of an agentry.dev ContextLake: Healthy while it serves this generation's
-- configuration, Suspended while hibernated (paused, or never started: the first query starts it),
-- Degraded when its workload, configuration, a dataset or its S3 notifications failed, Progressing
-- while it starts or loads and while the operator has not observed this generation.
local hs = notObservedYet(obj, "vmStatus")
if hs ~= nil then
  return hs
end
local status = obj.status
local conditions = conditionsOf(obj)
local ready = conditions["Ready"] or {}
local notifications = conditions["NotificationsReady"] or {}
local failedDataset = nil
for name, dataset in pairs(status.datasets or {}) do
  if dataset.status == "error" and (failedDataset == nil or name < failedDataset) then
    failedDataset = name
  end
end
hs = { status = "Progressing", message = ready.message or "the lake server is starting" }
if status.vmStatus == "error" or ready.reason == "ConfigInvalid" then
  hs.status = "Degraded"
elseif status.vmStatus == "paused" or status.vmStatus == "not_provisioned" then
  hs.status = "Suspended"
elseif notifications.status == "False" then
  hs.status = "Degraded"
  hs.message = notifications.message or "the S3 notification queue failed"
elseif failedDataset ~= nil then
  hs.status = "Degraded"
  hs.message = "dataset " .. failedDataset .. ": " .. (status.datasets[failedDataset].error or "loading failed")
elseif ready.status == "True" then
  hs.status = "Healthy"
end
return hs
