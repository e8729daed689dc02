// The task record lives in platform/: webhook deliveries (operator) carry it too.
export * from '../../platform/task-record.js';
