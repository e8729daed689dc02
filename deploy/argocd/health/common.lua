-- Shared by every kind's check: scripts/argocd-health.ts puts it before each one, since Argo CD
-- runs each argocd-cm health key on its own.

-- Progressing until the operator has written status (holding `field`, when one is named) for this
-- generation of the object; nil once it has.
local function notObservedYet(obj, field)
  local status = obj.status
  if status == nil or status.observedGeneration == nil or (field ~= nil and status[field] == nil) then
    return { status = "Progressing", message = "waiting for the operator" }
  end
  local generation = obj.metadata.generation
  if generation ~= nil and status.observedGeneration < generation then
    return {
      status = "Progressing",
      message = "waiting for the operator to observe generation " .. tostring(generation),
    }
  end
  return nil
end

-- The object's status conditions by type.
local function conditionsOf(obj)
  local byType = {}
  for _, condition in ipairs((obj.status or {}).conditions or {}) do
    byType[condition.type] = condition
  end
  return byType
end
