def get_assert(output, context)
  if context['vars']['k'] == 'h'
    { 'pass' => true, 'score' => 0.6, 'reason' => 'hash' }
  else
    output.include?('r')
  end
end
